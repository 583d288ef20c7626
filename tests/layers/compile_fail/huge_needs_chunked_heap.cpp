// HugeObjectHeap routes free by the kind of chunk a pointer is in, so its parent must hand
// out objects from chunks it can recognise (ownsChunk, freeIn) over a chunk source: over a
// plain heap it is rejected, naming the ChunkedObjectHeap concept.
// expect: [ (]ChunkedObjectHeap<Super>\)? class strata::HugeObjectHeap[^A-Za-z].*satisfaction of
// expect:  [^A-Za-z ]+ChunkedObjectHeap<Super>[^A-Za-z ]+ .with Super = strata::MallocHeap.
// expect: |constraints not satisfied for class template .HugeObjectHeap. .with Super =
// expect:  strata::MallocHeap..*does not satisfy .ChunkedObjectHeap.
#include "strata/general/strata_heap.hpp"
#include "strata/top/malloc_heap.hpp"

#ifdef STRATA_CONTROL
using Parent = strata::ThreadBoundHeap<
    strata::StrataLocalHeap<strata::SegmentCache<strata::AccountedSegments<strata::SegmentHeap<>>>>,
    strata::SegmentCache<strata::AccountedSegments<strata::SegmentHeap<>>>>;
#else
using Parent = strata::MallocHeap;
#endif

int main() {
  strata::HugeObjectHeap<Parent> heap;
  heap.free(heap.malloc(16));
  return 0;
}
