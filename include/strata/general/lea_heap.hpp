// LeaHeap: a model of Doug Lea's allocator (dlmalloc 2.7) as layers.
//
//  - requests of 128 KiB or more get their own mapping (SelectMmapHeap over MmapTop);
//  - small objects (<= 64 B) live on exact-size quick lists, coalesced only when a medium
//    request cannot otherwise be met (ThresholdHeap);
//  - medium requests are served by approximate best fit with immediate splitting and
//    coalescing (CoalesceHeap over a SegHeap of DLList bins in dlmalloc-like classes, over
//    boundary tags, CoalesceableHeap) from contiguous memory (SbrkTop).
#pragma once
#include <cstddef>

#include "strata/building/adapt_heap.hpp"
#include "strata/building/coalesce_heap.hpp"
#include "strata/combining/seg_heap.hpp"
#include "strata/combining/select_mmap_heap.hpp"
#include "strata/combining/threshold_heap.hpp"
#include "strata/concepts.hpp"
#include "strata/representation/coalesceable_heap.hpp"
#include "strata/top/mmap_heap.hpp"
#include "strata/top/sbrk_heap.hpp"

namespace strata {

inline constexpr std::size_t kLeaMmapThreshold = std::size_t{128} << 10;
inline constexpr unsigned kLeaBins = 128;  // LeaClasses 16 B .. 8 GiB

// The medium heap: splitting and coalescing over boundary-tagged blocks kept in bins.
template <Heap SbrkTop>
using LeaMediumHeap =
    CoalesceHeap<SegHeap<kLeaBins, LeaClasses, DLListHeap, CoalesceableHeap<SbrkTop>>>;

template <Heap SbrkTop = SbrkHeap<>, Heap MmapTop = MmapHeap>
class LeaHeap
    : public SelectMmapHeap<kLeaMmapThreshold, ThresholdHeap<LeaMediumHeap<SbrkTop>>, MmapTop> {
  using Base = SelectMmapHeap<kLeaMmapThreshold, ThresholdHeap<LeaMediumHeap<SbrkTop>>, MmapTop>;

 public:
  using Base::Base;
};

}  // namespace strata
