// LargeSpanHeap places large objects in arenas it asks its parent for (allocChunk) and keeps
// the books, the tunables and the clock through it, while the small requests go to the
// parent's own malloc: over a plain heap it is rejected, naming the SpanChunkSource concept.
// expect: [ (]SpanChunkSource<Super>\)? class strata::LargeSpanHeap[^A-Za-z].*satisfaction of
// expect:  [^A-Za-z ]+SpanChunkSource<Super>[^A-Za-z ]+ .with Super = strata::MallocHeap.
// expect: |constraints not satisfied for class template .LargeSpanHeap. .with Super =
// expect:  strata::MallocHeap..*does not satisfy .SpanChunkSource.
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
  strata::LargeSpanHeap<Parent> heap;
  heap.malloc(16);
  return 0;
}
