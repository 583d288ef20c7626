// LeaHeap: a model of Doug Lea's allocator (dlmalloc 2.7) as layers.
//
//  - requests of 128 KiB or more get their own mapping (SelectMmapHeap over MmapTop), a
//    threshold that rises, as glibc's does, up to 32 MiB when mapped objects are freed, so
//    a program that keeps allocating and freeing large blocks gets them recycled from the
//    coalescing heap instead of paying mmap + munmap and fresh page faults each time;
//  - small objects (requests up to 128 B, glibc's default fastbin limit, M_MXFAST on 64-bit)
//    live on exact-size quick lists, coalesced only when a medium request cannot otherwise
//    be met (ThresholdHeap);
//  - medium requests are served by approximate best fit with immediate splitting and
//    coalescing (CoalesceHeap over a SegHeap of DLList bins in dlmalloc-like classes, over
//    boundary tags, CoalesceableHeap, 8 bytes per allocated block) from contiguous memory
//    (SbrkTop). The bins are LeaClasses shifted by those 8 bytes, so each usable size up to
//    520 bytes has a bin of its own.
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
inline constexpr unsigned kLeaBins = 128;  // usable sizes 24 B .. 8 GiB
inline constexpr std::size_t kLeaQuickMax = 128;  // dlmalloc 2.7 had 64; ptmalloc/glibc 128

// The bins' classes: LeaClasses over usable sizes, which CoalesceableHeap makes 8 more than a
// multiple of 16.
using LeaBinClasses = ShiftedClasses<LeaClasses, 8>;

// The medium heap: splitting and coalescing over boundary-tagged blocks kept in bins.
template <Heap SbrkTop>
using LeaMediumHeap =
    CoalesceHeap<SegHeap<kLeaBins, LeaBinClasses, DLListHeap, CoalesceableHeap<SbrkTop>>>;

// Everything that is not mapped: quick lists over the medium heap.
template <Heap SbrkTop>
using LeaMainHeap = ThresholdHeap<LeaMediumHeap<SbrkTop>, kLeaQuickMax>;

template <Heap SbrkTop = SbrkHeap<>, Heap MmapTop = MmapHeap>
class LeaHeap : public SelectMmapHeap<kLeaMmapThreshold, LeaMainHeap<SbrkTop>, MmapTop, true> {
  using Base = SelectMmapHeap<kLeaMmapThreshold, LeaMainHeap<SbrkTop>, MmapTop, true>;

 public:
  using Base::Base;
};

}  // namespace strata
