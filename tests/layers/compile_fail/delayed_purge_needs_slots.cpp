// DelayedPurge decides when an owner's released slots go back, so it sits on SegmentSlots;
// over the process-wide source itself it is rejected, naming the PurgeableSlots concept.
// expect: [ (]PurgeableSlots<Super>\)? class strata::DelayedPurge[^A-Za-z].*satisfaction of
// expect:  [^A-Za-z ]+PurgeableSlots<Super>[^A-Za-z ]+ .with Super = strata::SegmentCache<
// expect: |constraints not satisfied for class template .DelayedPurge. .with Super =
// expect:  strata::SegmentCache<.*does not satisfy .PurgeableSlots.
#include "strata/strata_heap/accounted_segments.hpp"
#include "strata/strata_heap/delayed_purge.hpp"
#include "strata/strata_heap/page_queues.hpp"
#include "strata/strata_heap/segment_cache.hpp"
#include "strata/strata_heap/segment_slots.hpp"
#include "strata/top/segment_heap.hpp"

using Source = strata::SegmentCache<strata::AccountedSegments<strata::SegmentHeap<>>>;
#ifdef STRATA_CONTROL
using Parent = strata::SegmentSlots<Source, strata::QueuedPage>;
#else
using Parent = Source;
#endif

int main() {
  Source source;
  strata::DelayedPurge<Parent> purge(source);
  purge.purgeAll(strata::platform::Decommit::Now);
  return 0;
}
