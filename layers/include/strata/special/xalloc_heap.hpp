// XallocHeap: a stack-like arena, after 197.parser's xalloc. malloc bumps a pointer through
// chunks got from the parent; each object carries a 16-byte header (the size of the block
// below it, and its own usable size with an in-use bit). Freeing the LAST block pulls the
// bump pointer back past it and past every already-freed block below it; freeing any other
// block only clears its in-use bit, so its space comes back once everything above it is
// freed. Programs that free roughly in reverse order (parsers, recursive searches) get
// malloc and free at bump-pointer cost and memory that shrinks as they unwind.
//
// Chunks form a stack, chained through a 32-byte header ({below, bytes, saved bump pointer,
// saved last block}). When the current chunk is full a new one is pushed (ChunkSize bytes, or
// sized to fit a bigger request); the space left in the one below waits until the stack
// unwinds back into it. When the top chunk becomes empty it is popped: one ChunkSize chunk is
// kept cached for the next push, anything else goes back to the parent. A bottom chunk of
// ChunkSize bytes is not popped: when everything is freed the bump pointer is back at its
// base and it is the one idle chunk kept (a cached one is then given back). clear() drops
// every object and gives back every chunk but one, kept cached; the destructor gives back all.
//
// Block layout: [prevSize | size|kFlagInUse | object ...]; the word just below the object is
// in the shared header format (detail/header.hpp: a multiple of 16, flags in the low bits),
// so getSize reads it from the object alone. A double free is ignored (the bit is already
// clear). Under AddressSanitizer freed objects and all space above the bump pointer are
// poisoned; the headers of live and freed-but-not-popped blocks stay readable.
//
// Fast paths: malloc is an alignment round-up, a compare, two header stores and an add;
// free is a load, a compare and a store, plus one step per block popped.
#pragma once
#include <cerrno>
#include <cstddef>
#include <utility>

#include "strata/concepts.hpp"
#include "strata/detail/align.hpp"
#include "strata/detail/header.hpp"
#include "strata/detail/poison.hpp"

namespace strata {

template <std::size_t ChunkSize, Heap Super>
class XallocHeap : public Super {
  static_assert(Super::Alignment >= 16, "XallocHeap: the parent must align chunks to 16 bytes");

 public:
  static constexpr std::size_t Alignment = 16;
  static constexpr std::size_t ChunkHeaderSize = 32;
  static constexpr std::size_t BlockHeaderSize = 16;
  static_assert(ChunkSize % Alignment == 0 && ChunkSize >= ChunkHeaderSize + 2 * BlockHeaderSize,
                "XallocHeap: ChunkSize must be a multiple of 16 and hold a header and a block");

  using Super::Super;
  XallocHeap() = default;
  XallocHeap(const XallocHeap&) = delete;
  XallocHeap& operator=(const XallocHeap&) = delete;
  ~XallocHeap() {
    clear();
    if (cache_ != nullptr) giveBack(cache_, ChunkSize);
  }

  // Bumps a block (header + request rounded up to 16) off the current chunk; pushes a chunk
  // when it does not fit. malloc(0) takes a 16-byte object. Huge requests: nullptr, ENOMEM.
  void* malloc(std::size_t n) noexcept {
    std::size_t usable, blockBytes;
    if (!detail::checked_align_up(n == 0 ? 1 : n, Alignment, usable) ||
        !detail::checked_add(usable, BlockHeaderSize, blockBytes))
      return outOfMemory();
    if (blockBytes > static_cast<std::size_t>(end_ - cur_) && !pushChunk(blockBytes))
      return nullptr;
    auto* b = reinterpret_cast<Block*>(cur_);
    detail::unpoison(b, blockBytes);
    b->prevSize = last_ == nullptr ? 0 : static_cast<std::size_t>(cur_ - asBytes(last_));
    b->word = usable | detail::kFlagInUse;
    last_ = b;
    cur_ += blockBytes;
    return b + 1;
  }

  // Frees the last block by pulling the bump pointer back (past freed blocks below it too,
  // and popping chunks that empty); any other block is only marked free.
  void free(void* p) noexcept {
    if (p == nullptr) return;
    Block* b = static_cast<Block*>(p) - 1;
    if ((b->word & detail::kFlagInUse) == 0) return;
    b->word &= ~detail::kFlagInUse;
    detail::poison(p, b->word & ~detail::kFlagMask);
    if (b == last_) unwind();
  }

  // The usable size, from the header just below the object.
  static std::size_t getSize(void* p) noexcept {
    return p ? detail::header_word(p) & ~detail::kFlagMask : 0;
  }

  // Drops every object; every chunk goes back to the parent except one cached chunk.
  void clear() noexcept {
    while (Chunk* c = top_) {
      top_ = c->below;
      retire(c);
    }
    cur_ = end_ = nullptr;
    last_ = nullptr;
  }

  // Where the next block would start (nullptr when no chunk is in use, as after clear).
  void* bumpPointer() const noexcept { return cur_; }
  // How many chunks are on the stack (an empty bottom chunk counts), not the cached one.
  std::size_t chunks() const noexcept { return chunkCount_; }
  // Whether an empty ChunkSize chunk is kept for the next push.
  bool hasCachedChunk() const noexcept { return cache_ != nullptr; }

 private:
  struct Block {
    std::size_t prevSize;  // bytes from the block below to this one; 0 for a chunk's first
    std::size_t word;      // usable size | kFlagInUse
  };
  struct Chunk {
    Chunk* below;
    std::size_t bytes;
    std::byte* cur;  // saved bump pointer while another chunk is on top
    Block* last;     // saved last block (nullptr when the chunk is empty)
  };
  static_assert(sizeof(Block) == BlockHeaderSize && sizeof(Chunk) == ChunkHeaderSize);

  static std::byte* asBytes(void* p) noexcept { return static_cast<std::byte*>(p); }

  [[gnu::cold, gnu::noinline]] static void* outOfMemory() noexcept {
    errno = ENOMEM;
    return nullptr;
  }

  // Saves the current chunk's state and pushes a chunk that holds blockBytes: the cached
  // one when it is big enough, else a new one from the parent. False (ENOMEM) on failure.
  [[gnu::noinline]] bool pushChunk(std::size_t blockBytes) noexcept {
    std::size_t bytes;
    if (!detail::checked_add(blockBytes, ChunkHeaderSize, bytes)) return outOfMemory(), false;
    if (bytes < ChunkSize) bytes = ChunkSize;
    Chunk* c;
    if (bytes == ChunkSize && cache_ != nullptr) {
      c = cache_;
      cache_ = nullptr;
      detail::unpoison(c, ChunkHeaderSize);
    } else {
      c = static_cast<Chunk*>(Super::malloc(bytes));
      if (c == nullptr) return outOfMemory(), false;
      detail::poison(asBytes(c) + ChunkHeaderSize, bytes - ChunkHeaderSize);
    }
    if (top_ != nullptr) {
      top_->cur = cur_;
      top_->last = last_;
    }
    c->below = top_;
    c->bytes = bytes;
    top_ = c;
    ++chunkCount_;
    cur_ = asBytes(c) + ChunkHeaderSize;
    end_ = asBytes(c) + bytes;
    last_ = nullptr;
    return true;
  }

  // The last block was just freed: pull the bump pointer back past it and every freed block
  // below it; when the chunk empties, pop it and go on in the chunk below.
  void unwind() noexcept {
    std::byte* top = cur_;
    for (;;) {
      while (last_ != nullptr && (last_->word & detail::kFlagInUse) == 0) {
        cur_ = asBytes(last_);
        last_ = last_->prevSize == 0 ? nullptr : reinterpret_cast<Block*>(cur_ - last_->prevSize);
      }
      detail::poison(cur_, static_cast<std::size_t>(top - cur_));
      if (last_ != nullptr) return;
      Chunk* c = top_;
      if (c->below == nullptr && c->bytes == ChunkSize) {
        // The bottom chunk stays, empty, with the bump pointer at its base; it serves as the
        // one idle chunk, so a cached one goes back.
        if (cache_ != nullptr) giveBack(std::exchange(cache_, nullptr), ChunkSize);
        return;
      }
      top_ = c->below;
      retire(c);
      if (top_ == nullptr) {
        cur_ = end_ = nullptr;
        return;
      }
      cur_ = top = top_->cur;
      end_ = asBytes(top_) + top_->bytes;
      last_ = top_->last;
    }
  }

  // A chunk leaves the stack: kept (poisoned) as the cached chunk if it is a plain one and
  // none is cached yet, else given back to the parent.
  void retire(Chunk* c) noexcept {
    --chunkCount_;
    if (c->bytes == ChunkSize && cache_ == nullptr) {
      detail::poison(c, ChunkSize);
      cache_ = c;
    } else {
      giveBack(c, c->bytes);
    }
  }

  // Hands a chunk back to the parent, unpoisoned: the parent owns it again.
  void giveBack(Chunk* c, std::size_t bytes) noexcept {
    detail::unpoison(c, bytes);
    Super::free(c);
  }

  Chunk* top_ = nullptr;
  Chunk* cache_ = nullptr;
  std::byte* cur_ = nullptr;
  std::byte* end_ = nullptr;
  Block* last_ = nullptr;
  std::size_t chunkCount_ = 0;
};

}  // namespace strata
