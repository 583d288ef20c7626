// StrictSegHeap must find object sizes in its parent: over a bare SbrkHeap (no getSize)
// the composition is rejected at the StrictSegHeap line, naming the SizedHeap concept.
// expect: [ (]SizedHeap<Super>\)? class strata::StrictSegHeap[^A-Za-z].*satisfaction of
// expect:  [^A-Za-z ]+SizedHeap<Super>[^A-Za-z ]+ .with Super = strata::SbrkHeap<
// expect: |constraints not satisfied for class template .StrictSegHeap. .with NumBins = 8,
// expect:  .*Super = strata::SbrkHeap<.*does not satisfy .SizedHeap.
#include "strata/building/freelist_heap.hpp"
#include "strata/combining/strict_seg_heap.hpp"
#include "strata/representation/size_heap.hpp"
#include "strata/top/sbrk_heap.hpp"

#ifdef STRATA_CONTROL
using Parent = strata::SizeHeap<strata::SbrkHeap<>>;
#else
using Parent = strata::SbrkHeap<>;
#endif

int main() {
  strata::StrictSegHeap<8, strata::PowerOfTwoClasses<4>, strata::FreelistHeap, Parent> heap;
  void* p = heap.malloc(24);
  heap.free(p);
  return 0;
}
