// SegmentSlots takes segments that may come back warm (allocSegment(bool&)) and hands empty
// ones to a shared cache (cacheSegment), so its source is SegmentCache over
// AccountedSegments; AccountedSegments alone is rejected, naming the SlotSource concept.
// expect: [ (]SlotSource<Source>\)? class strata::SegmentSlots[^A-Za-z].*satisfaction of
// expect:  [^A-Za-z ]+SlotSource<Source>[^A-Za-z ]+ .with Source = strata::AccountedSegments<
// expect: |constraints not satisfied for class template .SegmentSlots. .with Source =
// expect:  strata::AccountedSegments<.*does not satisfy .SlotSource.
#include "strata/strata_heap/accounted_segments.hpp"
#include "strata/strata_heap/page_queues.hpp"
#include "strata/strata_heap/segment_cache.hpp"
#include "strata/strata_heap/segment_slots.hpp"
#include "strata/top/segment_heap.hpp"

#ifdef STRATA_CONTROL
using Source = strata::SegmentCache<strata::AccountedSegments<strata::SegmentHeap<>>>;
#else
using Source = strata::AccountedSegments<strata::SegmentHeap<>>;
#endif

int main() {
  Source source;
  strata::SegmentSlots<Source, strata::QueuedPage> slots(source);
  strata::SegmentSlots<Source, strata::QueuedPage>::Span span{};
  slots.takeSlots(1, 1, span);
  return 0;
}
