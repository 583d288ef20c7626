// ThresholdHeap: Lea's deferred coalescing. Small objects (at most QuickMax bytes) are kept
// on exact-size quick lists when freed and reused as they are, without coalescing: the
// cheapest possible path for the sizes programs allocate most. A quick-list object still
// counts as in use for the coalescing heap below, so it blocks merges while it waits.
//
// The price is fragmentation, paid back lazily: a medium request first tries the medium
// heap's free bins only; when they have nothing that fits, every quick list is flushed into
// the medium heap (which coalesces the objects with their free neighbours) and the request
// is asked again, so the heap grows only if even the flushed memory does not fit.
#pragma once
#include <cstddef>

#include "strata/building/freelist_heap.hpp"
#include "strata/combining/size_classes.hpp"
#include "strata/concepts.hpp"
#include "strata/top/null_heap.hpp"

namespace strata {

template <BinnedHeap Super, std::size_t QuickMax = 64>
class ThresholdHeap : public Super {
  using QuickClasses = LinearClasses<16>;
  static_assert(QuickMax >= 16 && QuickMax % 16 == 0,
                "ThresholdHeap: QuickMax must be a positive multiple of 16");
  static constexpr unsigned kQuickLists = QuickMax / 16;
  using QuickList = FreelistHeap<NullHeap<Super::Alignment>>;

 public:
  static constexpr std::size_t Alignment = Super::Alignment;
  static constexpr std::size_t QuickListMax = QuickMax;

  using Super::Super;
  ThresholdHeap() = default;
  ThresholdHeap(const ThresholdHeap&) = delete;
  ThresholdHeap& operator=(const ThresholdHeap&) = delete;
  ~ThresholdHeap() { flush(); }

  // Small: a quick-list pop (a load, a load, a store), else the medium heap at the class
  // size. Medium: the medium heap's bins, then a flush and the medium heap proper.
  void* malloc(std::size_t n) noexcept {
    if (n <= QuickMax) {
      const unsigned c = QuickClasses::size2class(n);
      if (void* p = quick_[c].malloc(0)) return p;
      return Super::malloc(QuickClasses::class2size(c));
    }
    if (void* p = Super::mallocFromBins(n)) return p;
    if (holding_) flush();
    return Super::malloc(n);
  }

  // Small objects go onto the quick list of the largest class they hold (a getSize, a
  // compare and two stores); the rest to the medium heap.
  void free(void* p) noexcept {
    if (p == nullptr) return;
    const std::size_t size = Super::getSize(p);
    if (size >= 16 && size <= QuickMax) {
      quick_[size / 16 - 1].free(p);
      holding_ = true;
      return;
    }
    Super::free(p);
  }

  // Hands every quick-list object to the medium heap, which coalesces it.
  void flush() noexcept {
    for (auto& list : quick_) {
      while (void* p = list.malloc(0)) Super::free(p);
    }
    holding_ = false;
  }

  // Frees everything at once: the quick lists forget their objects, the medium heap clears.
  void clear() noexcept
    requires ClearableHeap<Super>
  {
    for (auto& list : quick_) {
      while (list.malloc(0) != nullptr) {
      }
    }
    holding_ = false;
    Super::clear();
  }

 private:
  QuickList quick_[kQuickLists];
  bool holding_ = false;  // some quick list may hold an object
};

}  // namespace strata
