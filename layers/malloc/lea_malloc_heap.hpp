// LeaMallocHeap: the heap of libstrata-lea.so before its lock: LeaHeap plus the two things
// a malloc replacement asks of it beyond malloc and free (see strata/shim/malloc_shim.hpp).
// Private to layers/malloc (and its test), not a public layer.
#pragma once
#include <cstddef>
#include <cstdint>

#include "strata/detail/align.hpp"
#include "strata/general/lea_heap.hpp"
#include "strata/platform/memory.hpp"
#include "strata/platform/page.hpp"
#include "strata/top/mmap_heap.hpp"
#include "strata/top/sbrk_heap.hpp"

namespace strata {

template <Heap SbrkTop>
class LeaMallocHeap : public LeaHeap<SbrkTop> {
  using Medium = LeaMediumHeap<SbrkTop>;

 public:
  // realloc in place, as dlmalloc does, for blocks of the coalescing heap (a mapped one is
  // resized by its mapping: MmapHeap::resizeMapping).
  // Shrinking splits the tail off and frees it (merging it with a free successor); growing
  // takes in the free block that follows when the two together are big enough, and splits
  // off what is left over. nullptr, with p untouched, when the successor is not free or too
  // small, or n is beyond any block (above PTRDIFF_MAX, where the block size would wrap).
  // Cost: a few header loads and stores, plus a bin removal when growing.
  void* reallocInPlace(void* p, std::size_t n) noexcept {
    if (n > PTRDIFF_MAX) return nullptr;
    if (MmapHeap::isMapped(p)) return this->big().resizeMapping(p, n);
    const std::size_t want = Medium::usableFor(n);
    const std::size_t have = Medium::getSize(p);
    if (want > have) {
      if (!Medium::isNextFree(p)) return nullptr;
      void* after = Medium::next(p);
      if (have + Medium::blockSize(after) < want) return nullptr;
      this->remove(after);
      Medium::merge(p, after);
    }
    if (void* rest = Medium::split(p, want)) Medium::free(rest);
    return p;
  }

  // malloc_trim: the quick lists are flushed (so their objects coalesce), then the pages
  // inside the free block at the top of the break, less `pad` bytes, go back to the system
  // with MADV_DONTNEED. The break itself cannot move back (SbrkHeap frees only all at once),
  // so the address space stays reserved and the pages return, zeroed, when the block is
  // used again; its links and footer stay where they are. 1 when pages went back, else 0.
  int trim(std::size_t pad) noexcept {
    this->flush();
    void* last = this->lastFreeBlock();
    if (last == nullptr) return 0;
    const std::size_t page = platform::pageSize();
    const auto from = reinterpret_cast<std::uintptr_t>(last) + 32;  // past the links
    const auto to = reinterpret_cast<std::uintptr_t>(last) + Medium::blockSize(last) - 16;
    if (to <= from || to - from <= pad) return 0;
    const std::uintptr_t start = detail::align_up(from, page);
    const std::uintptr_t end = (to - pad) & ~(std::uintptr_t{page} - 1);
    if (end <= start) return 0;
    return platform::decommit(reinterpret_cast<void*>(start), end - start, platform::Decommit::Now)
               ? 1
               : 0;
  }
};

}  // namespace strata
