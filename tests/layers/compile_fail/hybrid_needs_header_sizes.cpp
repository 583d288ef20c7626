// HybridHeap tells its two heaps' objects apart by asking the big heap for the size of any
// object, so both must read sizes from a header in the object (a static getSize). MallocHeap
// asks the C library instead and cannot size the small heap's objects: with it as the big
// side the composition is rejected, naming HybridCompatible; SizeHeap<MmapHeap> is right.
// expect: [ (]HybridCompatible<SmallHeap, BigHeap>\)? class
// expect:  strata::HybridHeap[^A-Za-z].*satisfaction of [^A-Za-z ]+HybridCompatible<SmallHeap,
// expect:  BigHeap>[^A-Za-z ]+ .with SmallHeap = strata::KingsleyHeap<.*BigHeap =
// expect:  strata::MallocHeap.
// expect: |constraints not satisfied for class template .HybridHeap. .with Threshold = 1024,
// expect:  SmallHeap = strata::KingsleyHeap<.*BigHeap = strata::MallocHeap..*because
// expect:  .HybridCompatible<strata::KingsleyHeap<.*, strata::MallocHeap>. evaluated to false
#include "strata/combining/hybrid_heap.hpp"
#include "strata/general/kingsley_heap.hpp"
#include "strata/representation/size_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/mmap_heap.hpp"
#include "strata/top/sbrk_heap.hpp"

#ifdef STRATA_CONTROL
using Big = strata::SizeHeap<strata::MmapHeap>;
#else
using Big = strata::MallocHeap;
#endif

int main() {
  strata::HybridHeap<1024, strata::KingsleyHeap<strata::SbrkHeap<>>, Big> heap;
  heap.free(heap.malloc(100));
  heap.free(heap.malloc(4096));
  return 0;
}
