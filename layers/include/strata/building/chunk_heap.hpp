// ChunkHeap: carves small objects out of ChunkSize-byte chunks got from the parent, by
// bumping a pointer through the current chunk. It never frees one object: free does
// nothing, because ChunkHeap is meant to sit under a FreelistHeap (or another store) that
// keeps freed objects and hands them out again. It remembers every chunk, linked through a
// 16-byte header at the chunk's start, so clear() and the destructor give them all back.
// Carved objects carry no header, so ChunkHeap has no getSize (it hides its parent's).
//
// A request too big for a fresh chunk (more than ChunkSize - 16 bytes) gets a chunk of its
// own, sized to fit, from the parent. Like every ChunkHeap object it is not returned by free
// but kept on the chunk list until clear() or destruction, so ChunkHeap needs nothing of its
// parent beyond Heap, and never has to tell a carved object from a big one. Under a
// single-size FreelistHeap, where ChunkHeap belongs, all requests are one size anyway.
//
// Fast path: an alignment round-up, a compare and an add.
#pragma once
#include <cerrno>
#include <cstddef>

#include "strata/concepts.hpp"
#include "strata/detail/align.hpp"

namespace strata {

template <std::size_t ChunkSize, Heap Super>
class ChunkHeap : public Super {
  static_assert(Super::Alignment >= alignof(void*),
                "ChunkHeap: the parent must align chunks for a link pointer");

 public:
  static constexpr std::size_t HeaderSize = 16;
  static constexpr std::size_t Alignment = Super::Alignment < 16 ? Super::Alignment : 16;
  static_assert(ChunkSize % Alignment == 0 && ChunkSize > HeaderSize,
                "ChunkHeap: ChunkSize must be a multiple of the alignment and exceed 16");
  // The largest request carved from a shared chunk.
  static constexpr std::size_t MaxCarved = ChunkSize - HeaderSize;

  using Super::Super;
  ChunkHeap() = default;
  ChunkHeap(const ChunkHeap&) = delete;
  ChunkHeap& operator=(const ChunkHeap&) = delete;
  ~ChunkHeap() { release(); }

  // Bumps through the current chunk; starts a new one when the request does not fit.
  // malloc(0) takes Alignment bytes so every pointer is distinct.
  void* malloc(std::size_t n) noexcept {
    std::size_t need;
    if (!detail::checked_align_up(n == 0 ? 1 : n, Alignment, need)) {
      errno = ENOMEM;
      return nullptr;
    }
    if (need <= static_cast<std::size_t>(end_ - cur_)) {
      std::byte* p = cur_;
      cur_ += need;
      return p;
    }
    if (need > MaxCarved) return ownChunk(need);
    std::byte* chunk = newChunk(ChunkSize);
    if (chunk == nullptr) return nullptr;
    cur_ = chunk + HeaderSize + need;
    end_ = chunk + ChunkSize;
    return chunk + HeaderSize;
  }

  // Objects are only given back all at once (clear, destructor); see above.
  void free(void*) noexcept {}

  // Carved objects have no size of their own to report: the parent's getSize would be
  // asked about a pointer into one of its chunks, so it is hidden.
  std::size_t getSize(void*) = delete;

  // Gives every chunk back and starts afresh. A parent that can clear is cleared instead:
  // an sbrk-style parent ignores single frees, and only clear() lets it reuse the space.
  void clear() noexcept {
    if constexpr (ClearableHeap<Super>) {
      chunks_ = nullptr;
      Super::clear();
    } else {
      release();
    }
    cur_ = end_ = nullptr;
    chunkCount_ = 0;
  }

  // How many chunks (including those holding one big object) this heap holds.
  std::size_t chunks() const noexcept { return chunkCount_; }

 private:
  struct Chunk {
    Chunk* next;
  };
  static_assert(sizeof(Chunk) <= HeaderSize);

  // Frees every chunk to the parent, one by one.
  void release() noexcept {
    while (Chunk* c = chunks_) {
      chunks_ = c->next;
      Super::free(c);
    }
  }

  // Gets a chunk of `bytes` from the parent and links it in; nullptr when the parent fails.
  std::byte* newChunk(std::size_t bytes) noexcept {
    auto* c = static_cast<Chunk*>(Super::malloc(bytes));
    if (c == nullptr) return nullptr;
    c->next = chunks_;
    chunks_ = c;
    ++chunkCount_;
    return reinterpret_cast<std::byte*>(c);
  }

  // A request bigger than a chunk: a chunk of its own, leaving the current chunk current.
  void* ownChunk(std::size_t need) noexcept {
    std::size_t bytes;
    if (!detail::checked_add(need, HeaderSize, bytes)) {
      errno = ENOMEM;
      return nullptr;
    }
    std::byte* chunk = newChunk(bytes);
    return chunk == nullptr ? nullptr : chunk + HeaderSize;
  }

  Chunk* chunks_ = nullptr;
  std::byte* cur_ = nullptr;
  std::byte* end_ = nullptr;
  std::size_t chunkCount_ = 0;
};

}  // namespace strata
