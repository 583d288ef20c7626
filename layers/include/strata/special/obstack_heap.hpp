// ObstackHeap: an object stack (GNU obstack) in chunks got from the parent. Objects are built
// on top of the stack: grow() appends bytes to the object being built, finish() closes it and
// returns its address, and free(p) pops p together with everything allocated after it. An
// object that outgrows its chunk is moved to a new chunk big enough for it (plus slack), so a
// growing object is always contiguous; its address is final only once finish() returns it.
// malloc(n) is obstack_alloc: it appends n bytes to the growing object (usually empty) and
// finishes it.
//
// Each chunk starts with a 16-byte header (link to the older chunk, end of the chunk); the
// chunks form a stack, so free walks back from the newest chunk and gives every chunk that
// it empties back to the parent. Finished objects are aligned to alignment() (Alignment = 16
// unless setAlignment says otherwise, as GNU obstacks allow); the parent need only be a Heap.
//
// Built with AddressSanitizer, every byte of a chunk that is not part of an object (the room
// above the top, alignment padding, popped objects, the old copy of a moved object) is
// poisoned, so a use after free is reported. Built plain this costs nothing.
//
// Fast path: grow/blank are a compare and a copy/add; finish is an align-up and two stores.
#pragma once
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "strata/concepts.hpp"
#include "strata/detail/align.hpp"
#include "strata/detail/poison.hpp"

namespace strata {

template <std::size_t ChunkSize, Heap Super>
class ObstackHeap : public Super {
  static_assert(Super::Alignment >= alignof(void*),
                "ObstackHeap: the parent must align chunks for the chunk header");

 public:
  static constexpr std::size_t HeaderSize = 16;
  static constexpr std::size_t Alignment = 16;
  static_assert(ChunkSize > HeaderSize + Alignment, "ObstackHeap: ChunkSize too small");

  using Super::Super;
  ObstackHeap() = default;
  ObstackHeap(const ObstackHeap&) = delete;
  ObstackHeap& operator=(const ObstackHeap&) = delete;
  ~ObstackHeap() { clear(); }

  // obstack_alloc: appends n uninitialised bytes to the growing object and finishes it.
  // nullptr (errno = ENOMEM) when no chunk can hold it; the growing object is then unchanged.
  void* malloc(std::size_t n) noexcept {
    if (!blank(n)) return nullptr;
    return finish();
  }

  // Frees p and every object allocated after it (and the object being grown); emptied
  // chunks go back to the parent. free(nullptr) does nothing; a pointer this heap does not
  // hold is ignored (freeTo reports it).
  void free(void* p) noexcept {
    if (p != nullptr) freeTo(p);
  }

  // free, returning false (and changing nothing) when p lies in none of this heap's chunks.
  bool freeTo(void* p) noexcept {
    auto* q = static_cast<std::byte*>(p);
    Chunk* c = chunk_;
    while (c != nullptr && !(contents(c) <= q && q <= c->limit)) c = c->prev;
    if (c == nullptr) return false;
    if (c == chunk_) {
      if (q < next_) detail::poison(q, static_cast<std::size_t>(next_ - q));
    } else {
      while (chunk_ != c) {
        Chunk* older = chunk_->prev;
        giveBack(chunk_);
        chunk_ = older;
      }
      // The remaining chunk may hold an empty object at q; never free it on a move.
      maybeEmpty_ = true;
      limit_ = c->limit;
      detail::poison(q, static_cast<std::size_t>(limit_ - q));
    }
    base_ = next_ = q;
    return true;
  }

  // Appends n bytes from src to the growing object, moving it to a bigger chunk when it no
  // longer fits. false (errno = ENOMEM) when no chunk can be had; the object is unchanged.
  bool grow(const void* src, std::size_t n) noexcept {
    if (!blank(n)) return false;
    if (n != 0) std::memcpy(next_ - n, src, n);
    return true;
  }

  // Appends one byte (obstack_1grow).
  bool grow1(unsigned char c) noexcept {
    if (next_ == limit_ && !moveObject(1)) return false;
    detail::unpoison(next_, 1);
    *next_++ = static_cast<std::byte>(c);
    return true;
  }

  // Appends n uninitialised bytes (obstack_blank).
  bool blank(std::size_t n) noexcept {
    if (!makeRoom(n)) return false;
    detail::unpoison(next_, n);
    next_ += n;
    return true;
  }

  // Takes the last n bytes (at most the whole object) off the growing object.
  void shrink(std::size_t n) noexcept {
    const std::size_t size = objectSize();
    if (n > size) n = size;
    next_ -= n;
    detail::poison(next_, n);
  }

  // Makes sure n more bytes fit in the current chunk without moving the object later.
  bool makeRoom(std::size_t n) noexcept {
    if (chunk_ != nullptr && n <= room()) return true;
    return moveObject(n);
  }

  // Closes the growing object and returns it; the next object starts at the next aligned
  // address. nullptr only when the heap has no chunk yet and cannot get one.
  void* finish() noexcept {
    if (chunk_ == nullptr && !moveObject(0)) return nullptr;
    std::byte* object = base_;
    if (next_ == base_) maybeEmpty_ = true;
    const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(next_);
    const std::size_t pad = ((at + mask_) & ~mask_) - at;
    next_ = pad > room() ? limit_ : next_ + pad;
    base_ = next_;
    return object;
  }

  // Gives every chunk back to the parent: every object is freed; the heap stays usable.
  void clear() noexcept {
    while (Chunk* c = chunk_) {
      chunk_ = c->prev;
      giveBack(c);
    }
    base_ = next_ = limit_ = nullptr;
    maybeEmpty_ = false;
  }

  // The growing object: its start (may move until finished), size, and the free bytes after it.
  void* base() const noexcept { return base_; }
  void* nextFree() const noexcept { return next_; }
  std::size_t objectSize() const noexcept { return static_cast<std::size_t>(next_ - base_); }
  std::size_t room() const noexcept { return static_cast<std::size_t>(limit_ - next_); }

  // True when nothing has been allocated or grown (at most one chunk, and it is unused).
  bool empty() const noexcept {
    return chunk_ == nullptr || (chunk_->prev == nullptr && next_ == firstObject(chunk_));
  }

  // Bytes held from the parent in chunks (headers included).
  std::size_t memoryUsed() const noexcept {
    std::size_t total = 0;
    for (Chunk* c = chunk_; c != nullptr; c = c->prev)
      total += static_cast<std::size_t>(c->limit - reinterpret_cast<std::byte*>(c));
    return total;
  }

  // Size of the chunks taken from now on (header included; larger objects get larger ones).
  std::size_t chunkSize() const noexcept { return chunkSize_; }
  void setChunkSize(std::size_t bytes) noexcept {
    chunkSize_ = bytes < HeaderSize + Alignment ? ChunkSize : bytes;
  }

  // The alignment of finished objects from now on; a power of two (1 packs them).
  std::size_t alignment() const noexcept { return mask_ + 1; }
  void setAlignment(std::size_t a) noexcept {
    if (detail::is_pow2(a)) mask_ = a - 1;
  }

 private:
  struct Chunk {
    Chunk* prev;
    std::byte* limit;
  };
  static_assert(sizeof(Chunk) <= HeaderSize);

  static std::byte* contents(Chunk* c) noexcept {
    return reinterpret_cast<std::byte*>(c) + HeaderSize;
  }
  std::byte* firstObject(Chunk* c) const noexcept {
    const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(contents(c));
    return contents(c) + (((at + mask_) & ~mask_) - at);
  }

  // Returns a chunk to the parent, its poisoning lifted so the parent may use it freely.
  void giveBack(Chunk* c) noexcept {
    detail::unpoison(c, static_cast<std::size_t>(c->limit - reinterpret_cast<std::byte*>(c)));
    Super::free(c);
  }

  // Moves the growing object to a new chunk with room for n more bytes (and slack, so a
  // steadily growing object moves a logarithmic number of times). Chunk sizes are multiples
  // of 16, so a chunk's end is aligned and finish never leaves the top misaligned. The old
  // chunk goes back to the parent if the object was all it held.
  bool moveObject(std::size_t n) noexcept {
    const std::size_t size = objectSize();
    std::size_t bytes;
    if (!detail::checked_add(size, n, bytes) || !detail::checked_add(bytes, size / 8 + 100, bytes) ||
        !detail::checked_add(bytes, HeaderSize + mask_, bytes) ||
        !detail::checked_align_up(bytes < chunkSize_ ? chunkSize_ : bytes, Alignment, bytes)) {
      errno = ENOMEM;
      return false;
    }
    auto* c = static_cast<Chunk*>(Super::malloc(bytes));
    if (c == nullptr) {
      errno = ENOMEM;
      return false;
    }
    c->prev = chunk_;
    c->limit = reinterpret_cast<std::byte*>(c) + bytes;
    std::byte* start = firstObject(c);
    detail::poison(contents(c), static_cast<std::size_t>(c->limit - contents(c)));
    detail::unpoison(start, size);
    if (size != 0) std::memcpy(start, base_, size);
    if (chunk_ != nullptr) {
      if (base_ == firstObject(chunk_) && !maybeEmpty_) {
        c->prev = chunk_->prev;
        giveBack(chunk_);
      } else {
        detail::poison(base_, size);
      }
    }
    chunk_ = c;
    base_ = start;
    next_ = start + size;
    limit_ = c->limit;
    maybeEmpty_ = false;
    return true;
  }

  Chunk* chunk_ = nullptr;
  std::byte* base_ = nullptr;
  std::byte* next_ = nullptr;
  std::byte* limit_ = nullptr;
  std::size_t mask_ = Alignment - 1;
  std::size_t chunkSize_ = ChunkSize;
  bool maybeEmpty_ = false;
};

}  // namespace strata
