// KingsleyHeap: power-of-two segregated fits with no splitting or coalescing (the BSD 4.2
// allocator by Chris Kingsley). Fast, and wasteful: up to half of each object is rounding,
// and a freed object is only ever reused for its own class.
//
// As layers: a StrictSegHeap of power-of-two classes (16 B .. 128 TiB), each bin a
// FreelistHeap, over a SizeHeap that records the class, over Top (an sbrk-style heap).
#pragma once
#include <cstddef>

#include "strata/building/freelist_heap.hpp"
#include "strata/combining/size_classes.hpp"
#include "strata/combining/strict_seg_heap.hpp"
#include "strata/concepts.hpp"
#include "strata/representation/size_heap.hpp"

namespace strata {

inline constexpr unsigned kKingsleyBins = 44;  // 2^4 .. 2^47 bytes
using KingsleyClasses = PowerOfTwoClasses<4>;

template <Heap Top>
class KingsleyHeap
    : public StrictSegHeap<kKingsleyBins, KingsleyClasses, FreelistHeap, SizeHeap<Top>> {
 public:
  using StrictSegHeap<kKingsleyBins, KingsleyClasses, FreelistHeap, SizeHeap<Top>>::StrictSegHeap;
};

}  // namespace strata
