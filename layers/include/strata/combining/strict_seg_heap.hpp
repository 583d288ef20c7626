// StrictSegHeap: strict segregated fits. A request is rounded up to its size class and served
// from that class's bin only; a miss goes to the parent with the class size, so the object
// can return to the same bin when freed. Sizes beyond the last class go to the parent as is.
//
// Bins are LittleHeap<NullHeap>: stores that hold freed objects and yield nullptr when
// empty (FreelistHeap by default). The parent is shared by all bins, so one top heap
// accounts for the whole composition, and on destruction every bin is drained back to it.
#pragma once
#include <cstddef>

#include "strata/combining/size_classes.hpp"
#include "strata/concepts.hpp"
#include "strata/top/null_heap.hpp"

namespace strata {

template <unsigned NumBins, SizeClasses Classes, template <class> class LittleHeap,
          SizedHeap Super>
class StrictSegHeap : public Super {
 public:
  using Bin = LittleHeap<NullHeap<Super::Alignment>>;
  static_assert(Heap<Bin>, "StrictSegHeap: LittleHeap<NullHeap> must be a Heap");
  static constexpr std::size_t Alignment = Super::Alignment;
  static constexpr std::size_t MaxClassSize = Classes::class2size(NumBins - 1);

  using Super::Super;
  StrictSegHeap() = default;
  StrictSegHeap(const StrictSegHeap&) = delete;
  StrictSegHeap& operator=(const StrictSegHeap&) = delete;
  ~StrictSegHeap() { release(); }

  void* malloc(std::size_t n) noexcept {
    if (n > MaxClassSize) return Super::malloc(n);
    const unsigned c = Classes::size2class(n);
    // Any object in bin c fits n; the class size is worked out only on a miss.
    if (void* p = bins_[c].malloc(n)) return p;
    return Super::malloc(Classes::class2size(c));
  }

  void free(void* p) noexcept {
    if (p == nullptr) return;
    const std::size_t size = Super::getSize(p);
    if (size > MaxClassSize) {
      Super::free(p);
      return;
    }
    // A bin only holds objects of at least its size: round down.
    unsigned c;
    if constexpr (requires { Classes::floorClass(size); }) {
      c = Classes::floorClass(size);
    } else {
      c = Classes::size2class(size);
      if (Classes::class2size(c) > size) --c;
    }
    bins_[c].free(p);
  }

  // Returns every object cached in the bins to the parent.
  void release() noexcept {
    for (unsigned c = 0; c < NumBins; ++c) {
      while (void* p = bins_[c].malloc(Classes::class2size(c))) Super::free(p);
    }
  }

  void clear() noexcept
    requires ClearableHeap<Super>
  {
    for (unsigned c = 0; c < NumBins; ++c) {
      while (bins_[c].malloc(Classes::class2size(c)) != nullptr) {
      }
    }
    Super::clear();
  }

 private:
  Bin bins_[NumBins];
};

}  // namespace strata
