// PageQueues releases pages through its parent's purge policy (releasePage, maybePurge,
// purgeAll, overAllowance), so it must sit on DelayedPurge, not directly on SegmentSlots:
// the composition is rejected at the PageQueues line, naming the PageSource concept.
// expect: [ (]PageSource<Super>\)? class strata::PageQueues[^A-Za-z].*satisfaction of
// expect:  [^A-Za-z ]+PageSource<Super>[^A-Za-z ]+ .with Super = strata::SegmentSlots<
// expect: |constraints not satisfied for class template .PageQueues. .with Classes =
// expect:  strata::FineSizeClasses<.*does not satisfy .PageSource.
#include "strata/combining/fine_size_classes.hpp"
#include "strata/strata_heap/accounted_segments.hpp"
#include "strata/strata_heap/delayed_purge.hpp"
#include "strata/strata_heap/page_queues.hpp"
#include "strata/strata_heap/segment_cache.hpp"
#include "strata/strata_heap/segment_slots.hpp"
#include "strata/top/segment_heap.hpp"

using Source = strata::SegmentCache<strata::AccountedSegments<strata::SegmentHeap<>>>;
using Slots = strata::SegmentSlots<Source, strata::QueuedPage>;
#ifdef STRATA_CONTROL
using Parent = strata::DelayedPurge<Slots>;
#else
using Parent = Slots;
#endif

int main() {
  Source source;
  strata::PageQueues<strata::FineSizeClasses<3>, Parent> heap(source);
  bool fresh = false;
  heap.refill(heap.classOf(64), fresh);
  heap.tidy();
  return 0;
}
