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
//
// The general heap is constructed lazily, in storage kept inside this heap, on the first
// free (or the first call to general()): a heap that never frees a single object (most
// child reaps) never pays for building or tearing down the store (for the Reap's store, 128
// bins). Once built it stays built until destruction.
#pragma once
#include <cstddef>
#include <new>

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
    if (made_) {
      if (freed_) store().clear();
      store().~General();
    }
  }

  // Region mode stays a flag test in front of the region's (inlined) malloc; the general
  // heap's path is kept out of line so that it does not crowd the caller's loop.
  void* malloc(std::size_t n) noexcept {
    if (freed_) return mallocFromGeneral(n);
    return region_.malloc(n);
  }

  // From now on requests look in the general heap first.
  void free(void* p) noexcept {
    if (p == nullptr) return;
    freed_ = true;
    general().free(p);
  }

  std::size_t getSize(void* p) noexcept { return general().getSize(p); }

  // Frees everything; the general heap is touched only if something was ever freed.
  void clear() noexcept {
    if (freed_) store().clear();
    region_.clear();
    freed_ = false;
  }

  // True once something has been freed since the last clear (the heap left region mode).
  bool anyFreed() const noexcept { return freed_; }

  Region& region() noexcept { return region_; }
  const Region& region() const noexcept { return region_; }
  // The general heap (built now if it was not yet).
  General& general() noexcept {
    if (!made_) [[unlikely]] make();
    return store();
  }

 private:
  [[gnu::noinline]] void* mallocFromGeneral(std::size_t n) noexcept {
    if (void* p = store().malloc(n)) return p;
    return region_.malloc(n);
  }

  General& store() noexcept { return *std::launder(reinterpret_cast<General*>(storage_)); }
  [[gnu::noinline]] void make() noexcept {
    ::new (static_cast<void*>(storage_)) General();
    made_ = true;
  }

  Region region_;    // declared first: destroyed last, after the store has forgotten its objects
  bool freed_ = false;
  bool made_ = false;  // the general heap has been constructed in storage_
  alignas(General) unsigned char storage_[sizeof(General)];
};

}  // namespace strata
