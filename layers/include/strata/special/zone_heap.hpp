// ZoneHeap: a region (zone, arena). malloc bumps a pointer through ChunkSize-byte chunks got
// from the parent; free of one object does nothing; clear() gives every chunk back at once,
// and so does the destructor. This is the fastest allocator there is for phases of many
// objects that die together, and the one whose memory grows with every dead object it
// cannot give back (the reaps paper's point).
//
// Chunks are chained through a 16-byte header at their start ({next, bytes}) so clear is one
// walk. A request that does not fit in a fresh chunk (more than ChunkSize - 16 bytes) gets a
// chunk of its own, sized to fit, and the current chunk stays current. Objects carry no
// header, so ZoneHeap offers no getSize (it hides its parent's): keeping sizes would cost a
// word per object, which is what a region exists to avoid. bytesHeld()/peakBytesHeld() are
// the parent's, inherited unchanged.
//
// Under AddressSanitizer, chunk space not yet handed out is poisoned, every object is
// unpoisoned for exactly the bytes requested, and clear poisons the chunks it drops, so a use
// after clear is reported. A parent that is contiguous (ContiguousHeap: its free and clear
// never touch memory) has its chunks left poisoned when they go back; any other parent gets
// them unpoisoned, because it may write its own links into them (MallocHeap under ASan then
// reports a use after clear itself, as a use after free). In a plain build this costs nothing.
//
// Fast path of malloc: an alignment round-up, a compare and an add.
#pragma once
#include <cerrno>
#include <cstddef>

#include "strata/concepts.hpp"
#include "strata/detail/align.hpp"
#include "strata/detail/poison.hpp"

namespace strata {

template <std::size_t ChunkSize, Heap Super>
class ZoneHeap : public Super {
  static_assert(Super::Alignment >= 16, "ZoneHeap: the parent must align chunks to 16 bytes");

 public:
  static constexpr std::size_t Alignment = 16;
  static constexpr std::size_t HeaderSize = 16;
  static_assert(ChunkSize % Alignment == 0 && ChunkSize > HeaderSize,
                "ZoneHeap: ChunkSize must be a multiple of 16 and exceed 16");
  // The largest request bumped from a shared chunk; bigger ones get a chunk of their own.
  static constexpr std::size_t MaxBumped = ChunkSize - HeaderSize;

  using Super::Super;
  ZoneHeap() = default;
  ZoneHeap(const ZoneHeap&) = delete;
  ZoneHeap& operator=(const ZoneHeap&) = delete;
  ~ZoneHeap() { release(false); }

  // Bumps through the current chunk; starts a new one when the request does not fit.
  // malloc(0) takes 16 bytes so every pointer is distinct. Huge requests: nullptr, ENOMEM.
  void* malloc(std::size_t n) noexcept {
    std::size_t need;
    if (!detail::checked_align_up(n == 0 ? 1 : n, Alignment, need)) return outOfMemory();
    if (need <= static_cast<std::size_t>(end_ - cur_)) {
      std::byte* p = cur_;
      cur_ += need;
      detail::unpoison(p, n);
      return p;
    }
    return need > MaxBumped ? ownChunk(n, need) : freshChunk(n, need);
  }

  // A region frees objects only all at once (clear, destructor).
  void free(void*) noexcept {}

  // Hidden: objects have no header, and the parent would be asked about a pointer inside
  // one of its chunks.
  std::size_t getSize(void*) = delete;

  // Gives every chunk back and starts afresh. A parent that can clear is cleared instead of
  // being handed each chunk: an sbrk-style parent ignores single frees, and only its clear
  // lets the space be used again.
  void clear() noexcept {
    if constexpr (ClearableHeap<Super>) {
      forEachChunk([](Chunk* c) { dropChunk(c); });
      chunks_ = nullptr;
      Super::clear();
    } else {
      release(true);
    }
    cur_ = end_ = nullptr;
    chunkCount_ = 0;
  }

  // How many chunks (including those holding one big object) this zone holds.
  std::size_t chunks() const noexcept { return chunkCount_; }

 private:
  struct Chunk {
    Chunk* next;
    std::size_t bytes;
  };
  static_assert(sizeof(Chunk) <= HeaderSize);

  // Whether chunks given back to the parent may stay poisoned: only when the parent never
  // touches memory it is given back.
  static constexpr bool kKeepPoisoned = ContiguousHeap<Super>;

  [[gnu::cold, gnu::noinline]] static void* outOfMemory() noexcept {
    errno = ENOMEM;
    return nullptr;
  }

  template <class F>
  void forEachChunk(F f) noexcept {
    for (Chunk* c = chunks_; c != nullptr;) {
      Chunk* next = c->next;
      f(c);
      c = next;
    }
  }

  // Marks a chunk being given back: poisoned for a parent that leaves it alone, so a use
  // after clear is reported; unpoisoned for any other parent, which owns it again.
  static void dropChunk(Chunk* c) noexcept {
    if constexpr (kKeepPoisoned)
      detail::poison(c, c->bytes);
    else
      detail::unpoison(c, c->bytes);
  }

  // Frees every chunk to the parent, one by one. On clear the chunks are marked as above;
  // the destructor unpoisons them all, the parent being about to own them for good.
  void release(bool clearing) noexcept {
    while (Chunk* c = chunks_) {
      chunks_ = c->next;
      if (clearing)
        dropChunk(c);
      else
        detail::unpoison(c, c->bytes);
      Super::free(c);
    }
  }

  // Gets a chunk of `bytes` from the parent, links it in, and poisons all of it past the
  // header; nullptr (ENOMEM) when the parent fails.
  std::byte* newChunk(std::size_t bytes) noexcept {
    void* raw = Super::malloc(bytes);
    if (raw == nullptr) return static_cast<std::byte*>(outOfMemory());
    detail::unpoison(raw, HeaderSize);
    auto* c = static_cast<Chunk*>(raw);
    c->next = chunks_;
    c->bytes = bytes;
    chunks_ = c;
    ++chunkCount_;
    detail::poison(static_cast<std::byte*>(raw) + HeaderSize, bytes - HeaderSize);
    return static_cast<std::byte*>(raw);
  }

  // The current chunk is full: a fresh one becomes current (the rest of the old one is lost
  // until clear, as in every region).
  [[gnu::noinline]] void* freshChunk(std::size_t n, std::size_t need) noexcept {
    std::byte* chunk = newChunk(ChunkSize);
    if (chunk == nullptr) return nullptr;
    std::byte* p = chunk + HeaderSize;
    cur_ = p + need;
    end_ = chunk + ChunkSize;
    detail::unpoison(p, n);
    return p;
  }

  // A request bigger than a chunk: a chunk of its own, leaving the current chunk current.
  [[gnu::noinline]] void* ownChunk(std::size_t n, std::size_t need) noexcept {
    std::size_t bytes;
    if (!detail::checked_add(need, HeaderSize, bytes)) return outOfMemory();
    std::byte* chunk = newChunk(bytes);
    if (chunk == nullptr) return nullptr;
    detail::unpoison(chunk + HeaderSize, n);
    return chunk + HeaderSize;
  }

  Chunk* chunks_ = nullptr;
  std::byte* cur_ = nullptr;
  std::byte* end_ = nullptr;
  std::size_t chunkCount_ = 0;
};

}  // namespace strata
