// KingsleyCoalesceHeap: "Kingsley plus coalescing", the experiment of the heap-layers paper.
// Requests are rounded to the same power-of-two classes as KingsleyHeap, but the bins are
// DLList stores in a searching SegHeap, with CoalesceHeap and CoalesceableHeap slid in:
// freed memory merges with its free neighbours and is reused for any size, trading some
// speed (immediate coalescing on every free) for much less memory.
#pragma once
#include <cstddef>

#include "strata/building/adapt_heap.hpp"
#include "strata/building/coalesce_heap.hpp"
#include "strata/combining/seg_heap.hpp"
#include "strata/concepts.hpp"
#include "strata/general/kingsley_heap.hpp"
#include "strata/representation/coalesceable_heap.hpp"
#include "strata/top/sbrk_heap.hpp"

namespace strata {

template <Heap Top = SbrkHeap<>>
class KingsleyCoalesceHeap
    : public CoalesceHeap<
          SegHeap<kKingsleyBins, KingsleyClasses, DLListHeap, CoalesceableHeap<Top>>> {
  using Base =
      CoalesceHeap<SegHeap<kKingsleyBins, KingsleyClasses, DLListHeap, CoalesceableHeap<Top>>>;

 public:
  using Base::Base;

  // Rounds n up to its power-of-two class (one lzcnt and a shift), then allocates with
  // splitting. Requests beyond the last class are passed on unrounded (and fail).
  void* malloc(std::size_t n) noexcept {
    if (n <= Base::MaxClassSize) n = KingsleyClasses::class2size(KingsleyClasses::size2class(n));
    return Base::malloc(n);
  }
};

}  // namespace strata
