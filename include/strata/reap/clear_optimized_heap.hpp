// ClearOptimizedHeap: a region that can also free. While nothing has been freed, every
// request goes straight to the Region heap (in the Reap, a bump pointer through chunks) and
// clear() only clears the region; once an object has been freed, it goes to the General heap
// and later requests are served from there first, falling back on the region when the
// general heap has nothing that fits. clear() empties both and the heap is in region mode
// again.
//
// General must accept the Region's objects: its free and getSize must work on them (in the
// Reap both share CoalesceableHeap's boundary tags, and General is a coalescing store that
// owns no memory of its own). Cost in region mode: one flag test on top of the region's
// malloc; afterwards the general heap's malloc, plus the region's on a miss.
#pragma once
#include <cstddef>

#include "strata/concepts.hpp"

namespace strata {

template <ClearableHeap Region, ClearableHeap General>
  requires SizedHeap<General>
class ClearOptimizedHeap {
 public:
  static constexpr std::size_t Alignment =
      Region::Alignment < General::Alignment ? Region::Alignment : General::Alignment;

  ClearOptimizedHeap() = default;
  ClearOptimizedHeap(const ClearOptimizedHeap&) = delete;
  ClearOptimizedHeap& operator=(const ClearOptimizedHeap&) = delete;
  // The general heap forgets the region's objects before the region lets go of them.
  ~ClearOptimizedHeap() {
    if (freed_) general_.clear();
  }

  void* malloc(std::size_t n) noexcept {
    if (freed_) {
      if (void* p = general_.malloc(n)) return p;
    }
    return region_.malloc(n);
  }

  // From now on requests look in the general heap first.
  void free(void* p) noexcept {
    if (p == nullptr) return;
    freed_ = true;
    general_.free(p);
  }

  std::size_t getSize(void* p) noexcept { return general_.getSize(p); }

  // Frees everything; the general heap is touched only if something was ever freed.
  void clear() noexcept {
    if (freed_) general_.clear();
    region_.clear();
    freed_ = false;
  }

  // True once something has been freed since the last clear (the heap left region mode).
  bool anyFreed() const noexcept { return freed_; }

  Region& region() noexcept { return region_; }
  const Region& region() const noexcept { return region_; }
  General& general() noexcept { return general_; }

 private:
  Region region_;    // declared first: destroyed last, after general_ has forgotten its objects
  General general_;
  bool freed_ = false;
};

}  // namespace strata
