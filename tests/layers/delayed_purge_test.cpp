// DelayedPurge over SegmentSlots, SegmentCache and AccountedSegments: released slots within
// the allowance stay committed for good; beyond it a wholly empty segment goes to the shared
// cache at once and other released slots are decommitted only once the purge delay has
// passed (maybePurge and a sweep's purgeIfDue); more than maxDelayedBytes released is purged
// at once; purgeAll gives everything back.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "strata/strata_heap/accounted_segments.hpp"
#include "strata/strata_heap/delayed_purge.hpp"
#include "strata/strata_heap/page_queues.hpp"
#include "strata/strata_heap/segment_cache.hpp"
#include "strata/strata_heap/segment_slots.hpp"
#include "strata/top/segment_heap.hpp"

using namespace strata;

using Source = SegmentCache<AccountedSegments<SegmentHeap<>>>;
using Purge = DelayedPurge<SegmentSlots<Source, QueuedPage>>;
constexpr std::size_t kSlot = Purge::SlotSize;
constexpr std::uint64_t kDelay = 100'000;

namespace {
struct Fixture {
  explicit Fixture(std::size_t dirtySlots, std::uint64_t delay = kDelay,
                   std::size_t maxDelayed = std::size_t{512} << 20)
      : source(std::make_unique<Source>(tunables(dirtySlots, delay, maxDelayed))), heap(*source) {}
  static StrataTunables tunables(std::size_t dirtySlots, std::uint64_t delay, std::size_t maxDelayed) {
    StrataTunables t;
    t.dirtySlots = dirtySlots;
    t.purgeDelayMs = delay;
    t.maxDelayedBytes = maxDelayed;
    return t;
  }
  QueuedPage* take(std::size_t n) {
    Purge::Span span{};
    return heap.takeSlots(n, 1, span);
  }
  std::unique_ptr<Source> source;
  Purge heap;
};
}  // namespace

TEST(DelayedPurge, WithinTheAllowanceNothingIsDecommitted) {
  Fixture f(4);
  QueuedPage* keep = f.take(1);
  std::vector<QueuedPage*> pages;
  for (int i = 0; i < 3; ++i) pages.push_back(f.take(1));
  const std::size_t committed = f.source->committed();
  for (QueuedPage* p : pages) f.heap.releasePage(p);
  EXPECT_EQ(f.heap.dirtySlots(), 3u);
  f.heap.maybePurge(Source::nowMs() + 10 * kDelay);
  f.heap.purgeIfDue(Source::nowMs() + 10 * kDelay);
  EXPECT_EQ(f.heap.dirtySlots(), 3u) << "kept for good, however late";
  EXPECT_EQ(f.source->committed(), committed);
  // The last page emptying the segment is within the allowance as well: it stays.
  f.heap.releasePage(keep);
  EXPECT_EQ(f.heap.dirtySlots(), 4u);
  EXPECT_EQ(f.source->cachedSegments(), 0u);
}

TEST(DelayedPurge, TheAllowanceGrowsWithUsedSlots) {
  Fixture f(0);
  f.take(32);  // 32 used: an allowance of 4
  QueuedPage* p = f.take(4);
  f.heap.releasePage(p);
  f.heap.maybePurge(Source::nowMs() + 10 * kDelay);
  EXPECT_EQ(f.heap.dirtySlots(), 4u);
}

TEST(DelayedPurge, BeyondTheAllowanceAnEmptySegmentGoesToTheCacheAtOnce) {
  Fixture f(0);
  QueuedPage* p = f.take(4);
  const std::size_t committed = f.source->committed();
  f.heap.releasePage(p);
  EXPECT_EQ(f.source->cachedSegments(), 1u);
  EXPECT_EQ(f.heap.dirtySlots(), 0u);
  EXPECT_EQ(f.source->committed(), committed) << "the cache keeps it committed";
  EXPECT_EQ(f.take(4), p) << "and gives it back warm";
}

TEST(DelayedPurge, DecommittedOnlyAfterTheDelay) {
  Fixture f(0);
  f.take(2);
  QueuedPage* p = f.take(4);
  const std::size_t committed = f.source->committed();
  f.heap.releasePage(p);
  const std::uint64_t released = Source::nowMs();
  EXPECT_EQ(f.heap.dirtySlots(), 4u);
  f.heap.maybePurge();
  f.heap.maybePurge(released + kDelay / 2);
  EXPECT_EQ(f.heap.dirtySlots(), 4u) << "not yet due";
  EXPECT_EQ(f.source->committed(), committed);
  f.heap.maybePurge(released + kDelay + 1000);
  EXPECT_EQ(f.heap.dirtySlots(), 0u);
  EXPECT_EQ(f.source->committed(), committed - 4 * kSlot);
  EXPECT_EQ(f.source->cachedSegments(), 0u) << "the segment is not empty";
}

TEST(DelayedPurge, ARealDelayPasses) {
  Fixture f(0, 30);
  f.take(2);
  QueuedPage* p = f.take(4);
  f.heap.releasePage(p);
  EXPECT_EQ(f.heap.dirtySlots(), 4u);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  f.heap.maybePurge();
  EXPECT_EQ(f.heap.dirtySlots(), 0u);
}

TEST(DelayedPurge, OnlyReleasesOlderThanTheDelayGo) {
  Fixture f(0, 40);
  f.take(40);  // segment A, kept busy
  QueuedPage* a = f.take(20);
  QueuedPage* b = f.take(30);  // segment B
  f.take(30);
  ASSERT_NE(Purge::segmentOfPage(a), Purge::segmentOfPage(b));
  f.heap.releasePage(a);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  f.heap.releasePage(b);
  // The sweep at the moment A's release falls due (its time given, not read from the clock:
  // however slow the machine, B, released later, is not due yet).
  const std::uint64_t releasedA = Purge::segmentOfPage(a)->dirtyAt;
  ASSERT_LT(releasedA, Purge::segmentOfPage(b)->dirtyAt) << "B was released 30 ms after A";
  f.heap.maybePurge(releasedA + 40);
  EXPECT_EQ(f.heap.dirtySlots(), 30u) << "A's release is due, B's is not";
}

TEST(DelayedPurge, PurgeIfDueIsTheSweepsCall) {
  Fixture f(0);
  f.take(2);
  QueuedPage* p = f.take(4);
  f.heap.releasePage(p);
  const std::uint64_t released = Source::nowMs();
  f.heap.purgeIfDue(released);
  EXPECT_EQ(f.heap.dirtySlots(), 4u);
  f.heap.purgeIfDue(released + kDelay + 1000);
  EXPECT_EQ(f.heap.dirtySlots(), 0u);
}

TEST(DelayedPurge, MoreThanTheHardCapIsPurgedAtOnce) {
  Fixture f(0, kDelay, 2 * kSlot);
  f.take(2);
  QueuedPage* small = f.take(2);
  QueuedPage* big = f.take(3);
  const std::size_t committed = f.source->committed();
  f.heap.releasePage(small);
  EXPECT_EQ(f.heap.dirtySlots(), 2u) << "at the cap, not over it";
  f.heap.releasePage(big);
  EXPECT_EQ(f.heap.dirtySlots(), 0u) << "5 slots > the cap of 2: no waiting";
  EXPECT_EQ(f.source->committed(), committed - 5 * kSlot);
}

TEST(DelayedPurge, PurgeAllGivesBackEverythingReleased) {
  Fixture f(16);
  f.take(2);
  QueuedPage* p = f.take(4);
  Purge::Span span{};
  QueuedPage* q = f.heap.takeSlots(3, 1, span);
  f.heap.releasePage(p);
  f.heap.releasePage(q);
  EXPECT_EQ(f.heap.dirtySlots(), 7u);
  const std::size_t committed = f.source->committed();
  f.heap.purgeAll(platform::Decommit::Now);
  EXPECT_EQ(f.heap.dirtySlots(), 0u);
  EXPECT_EQ(f.source->committed(), committed - 7 * kSlot);
  f.heap.takeSlots(7, 1, span);
  EXPECT_TRUE(span.zero);
}
