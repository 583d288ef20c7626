// SegmentCache takes segments from its parent by name (allocSegment) and keeps the books
// and the clock through it, so it sits on AccountedSegments, not on the bare SegmentHeap:
// the composition is rejected, naming the SegmentSupply concept.
// expect: [ (]SegmentSupply<Super>\)? class strata::SegmentCache[^A-Za-z].*satisfaction of
// expect:  [^A-Za-z ]+SegmentSupply<Super>[^A-Za-z ]+ .with Super = strata::SegmentHeap<
// expect: |constraints not satisfied for class template .SegmentCache. .with Super =
// expect:  strata::SegmentHeap<.*does not satisfy .SegmentSupply.
#include "strata/strata_heap/accounted_segments.hpp"
#include "strata/strata_heap/segment_cache.hpp"
#include "strata/top/segment_heap.hpp"

#ifdef STRATA_CONTROL
using Parent = strata::AccountedSegments<strata::SegmentHeap<>>;
#else
using Parent = strata::SegmentHeap<>;
#endif

int main() {
  strata::SegmentCache<Parent> cache;
  bool warm = false;
  cache.cacheSegment(cache.allocSegment(warm), 0);
  cache.purgeCache(0, true);
  return 0;
}
