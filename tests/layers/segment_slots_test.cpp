// SegmentSlots over SegmentCache and AccountedSegments: pages placed in the segment whose
// longest free run fits best, released (dirty) slots reused first, Span::zero only for slots
// that read as zero (fresh, or decommitted with Now), pageAt is nullptr for the header and
// free slots, giveAway hands an empty segment to the cache (and it comes back warm),
// decommitDirty honours its cutoff, the used and dirty counts, and spans from slot 1 on.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>

#include "strata/strata_heap/accounted_segments.hpp"
#include "strata/strata_heap/page_queues.hpp"
#include "strata/strata_heap/segment_cache.hpp"
#include "strata/strata_heap/segment_slots.hpp"
#include "strata/top/segment_heap.hpp"

using namespace strata;

using Source = SegmentCache<AccountedSegments<SegmentHeap<>>>;
using Slots = SegmentSlots<Source, QueuedPage>;
using Segment = Slots::Segment;
using Span = Slots::Span;
constexpr std::size_t kSlot = Slots::SlotSize;
constexpr std::size_t kHeader = Slots::HeaderBytes;
static_assert(Slots::Slots == 64);

namespace {
struct Fixture {
  explicit Fixture(StrataTunables t = longDelay()) : source(std::make_unique<Source>(t)), slots(*source) {}
  static StrataTunables longDelay() {
    StrataTunables t;
    t.purgeDelayMs = 100'000;
    return t;
  }
  std::unique_ptr<Source> source;
  Slots slots;
};

std::size_t slotIndex(const QueuedPage* page) {
  return static_cast<std::size_t>(page - Slots::segmentOfPage(page)->pages);
}
std::byte* base(const Segment* seg) { return reinterpret_cast<std::byte*>(const_cast<Segment*>(seg)); }
}  // namespace

TEST(SegmentSlots, FreshSlotsAndTheHeaderSlot) {
  Fixture f;
  Span span{};
  QueuedPage* p0 = f.slots.takeSlots(1, 0, span);
  ASSERT_NE(p0, nullptr);
  Segment* seg = Slots::segmentOfPage(p0);
  EXPECT_EQ(Slots::segmentOf(seg), seg);
  EXPECT_EQ(slotIndex(p0), 0u);
  EXPECT_EQ(span.area, base(seg) + kHeader) << "a page in slot 0 starts after the header";
  EXPECT_EQ(span.bytes, kSlot - kHeader);
  EXPECT_TRUE(span.zero);
  QueuedPage* p1 = f.slots.takeSlots(3, 1, span);
  EXPECT_EQ(Slots::segmentOfPage(p1), seg);
  EXPECT_EQ(slotIndex(p1), 1u);
  EXPECT_EQ(span.area, base(seg) + kSlot);
  EXPECT_EQ(span.bytes, 3 * kSlot);
  EXPECT_TRUE(span.zero);
  EXPECT_EQ(Slots::slotsOf(p0), 1u);
  EXPECT_EQ(Slots::slotsOf(p1), 3u);
  EXPECT_EQ(f.slots.usedSlots(), 4u);
  EXPECT_EQ(f.slots.dirtySlots(), 0u);
  EXPECT_EQ(f.source->committed(), kHeader + 4 * kSlot);
}

TEST(SegmentSlots, PageAtFindsPagesAndNothingElse) {
  Fixture f;
  Span span{};
  QueuedPage* p1 = f.slots.takeSlots(3, 1, span);
  Segment* seg = Slots::segmentOfPage(p1);
  EXPECT_EQ(Slots::pageAt(seg, base(seg) + 100), nullptr) << "header, no page in slot 0";
  EXPECT_EQ(Slots::pageAt(seg, base(seg) + kSlot), p1);
  EXPECT_EQ(Slots::pageAt(seg, base(seg) + 2 * kSlot + 5), p1);
  EXPECT_EQ(Slots::pageAt(seg, base(seg) + 4 * kSlot - 1), p1);
  EXPECT_EQ(Slots::pageAt(seg, base(seg) + 4 * kSlot), nullptr) << "a free slot";
  EXPECT_EQ(Slots::pageAt(seg, base(seg) + Source::SegmentSize - 1), nullptr);
  QueuedPage* p0 = f.slots.takeSlots(1, 0, span);
  EXPECT_EQ(slotIndex(p0), 0u);
  EXPECT_EQ(Slots::pageAt(seg, span.area), p0);
  EXPECT_EQ(Slots::pageAt(seg, base(seg) + kSlot - 1), p0);
  EXPECT_EQ(Slots::pageAt(seg, base(seg) + 100), nullptr) << "header, page in slot 0";
  EXPECT_EQ(Slots::pageAt(seg, base(seg) + kHeader - 1), nullptr);
  f.slots.releaseSlots(p1, 1);
  EXPECT_EQ(Slots::pageAt(seg, base(seg) + 2 * kSlot), nullptr) << "released";
}

TEST(SegmentSlots, CommittedRunsFirstThenBestFitByLongestRun) {
  Fixture f;
  Span span{};
  // Segment A: slot 0, a 10-slot page, the rest; the 10 slots are then released.
  f.slots.takeSlots(1, 0, span);
  QueuedPage* ten = f.slots.takeSlots(10, 1, span);
  f.slots.takeSlots(53, 1, span);
  Segment* a = Slots::segmentOfPage(ten);
  f.slots.releaseSlots(ten, 1);
  // Segment B: 60 slots used, 3 free at its end.
  QueuedPage* sixty = f.slots.takeSlots(60, 1, span);
  Segment* b = Slots::segmentOfPage(sixty);
  ASSERT_NE(a, b);
  EXPECT_EQ(a->maxRun, 10u);
  EXPECT_EQ(b->maxRun, 3u);
  QueuedPage* two = f.slots.takeSlots(2, 1, span);
  EXPECT_EQ(Slots::segmentOfPage(two), a) << "a committed run first, though B's run is tighter";
  EXPECT_EQ(slotIndex(two), 1u);
  EXPECT_FALSE(span.zero);
  QueuedPage* three = f.slots.takeSlots(3, 1, span);
  EXPECT_EQ(Slots::segmentOfPage(three), a) << "what is left of the committed run";
  EXPECT_EQ(slotIndex(three), 3u);
  f.slots.releaseSlots(three, 2);
  f.slots.decommitDirty(platform::Decommit::Now, ~std::uint64_t{0});  // nothing committed is free now
  QueuedPage* clean = f.slots.takeSlots(3, 1, span);
  EXPECT_EQ(Slots::segmentOfPage(clean), b) << "no committed run: the tightest free run that fits";
  EXPECT_EQ(slotIndex(clean), 61u);
  EXPECT_TRUE(span.zero);
  QueuedPage* big = f.slots.takeSlots(20, 1, span);
  EXPECT_NE(Slots::segmentOfPage(big), a);
  EXPECT_NE(Slots::segmentOfPage(big), b);
}

TEST(SegmentSlots, DirtySlotsAreReusedFirstAndCostNoCommit) {
  Fixture f;
  Span span{};
  f.slots.takeSlots(1, 0, span);
  QueuedPage* a = f.slots.takeSlots(2, 1, span);
  QueuedPage* b = f.slots.takeSlots(2, 1, span);
  QueuedPage* c = f.slots.takeSlots(2, 1, span);
  std::memset(span.area, 0xCD, span.bytes);
  f.slots.takeSlots(2, 1, span);  // keeps the segment from being empty
  f.slots.releaseSlots(a, 1);
  f.slots.releaseSlots(b, 1);
  f.slots.decommitDirty(platform::Decommit::Now, ~std::uint64_t{0});  // slots 1-4 read as zero again
  f.slots.releaseSlots(c, 2);                                 // slots 5-6 dirty
  EXPECT_EQ(f.slots.dirtySlots(), 2u);
  EXPECT_EQ(f.slots.usedSlots(), 3u);
  const std::size_t committed = f.source->committed();
  QueuedPage* again = f.slots.takeSlots(2, 1, span);
  EXPECT_EQ(again, c) << "the dirty run, though slots 1-4 come first";
  EXPECT_FALSE(span.zero) << "used and released: not zero";
  EXPECT_EQ(static_cast<unsigned char*>(static_cast<void*>(span.area))[0], 0xCD);
  EXPECT_EQ(f.source->committed(), committed) << "still committed: nothing to commit";
  EXPECT_EQ(f.slots.dirtySlots(), 0u);
  QueuedPage* clean = f.slots.takeSlots(2, 1, span);
  EXPECT_EQ(slotIndex(clean), 1u);
  EXPECT_TRUE(span.zero) << "decommitted with Now";
  EXPECT_EQ(f.source->committed(), committed + 2 * kSlot);
}

TEST(SegmentSlots, LazyDecommitIsNotZero) {
  Fixture f;
  Span span{};
  f.slots.takeSlots(1, 0, span);
  QueuedPage* a = f.slots.takeSlots(4, 1, span);
  f.slots.releaseSlots(a, 1);
  const std::size_t committed = f.source->committed();
  EXPECT_EQ(f.slots.decommitDirty(platform::Decommit::Lazy, ~std::uint64_t{0}), ~std::uint64_t{0});
  EXPECT_EQ(f.source->committed(), committed - 4 * kSlot);
  EXPECT_EQ(f.slots.dirtySlots(), 0u);
  f.slots.takeSlots(4, 1, span);
  EXPECT_FALSE(span.zero) << "MADV_FREE pages may keep their bytes";
  EXPECT_EQ(f.source->committed(), committed);
}

TEST(SegmentSlots, NowDecommitReadsZero) {
  Fixture f;
  Span span{};
  f.slots.takeSlots(1, 0, span);
  QueuedPage* a = f.slots.takeSlots(4, 1, span);
  std::memset(span.area, 0xEE, span.bytes);
  f.slots.releaseSlots(a, 1);
  f.slots.decommitDirty(platform::Decommit::Now, ~std::uint64_t{0});
  EXPECT_EQ(f.slots.takeSlots(4, 1, span), a);
  ASSERT_TRUE(span.zero);
  for (std::size_t i = 0; i < span.bytes; i += 4096) ASSERT_EQ(static_cast<int>(span.area[i]), 0);
}

TEST(SegmentSlots, DecommitDirtyHonoursTheCutoff) {
  Fixture f;
  Span span{};
  QueuedPage* a1 = f.slots.takeSlots(30, 1, span);
  QueuedPage* a2 = f.slots.takeSlots(30, 1, span);
  QueuedPage* b1 = f.slots.takeSlots(30, 1, span);
  QueuedPage* b2 = f.slots.takeSlots(30, 1, span);
  ASSERT_EQ(Slots::segmentOfPage(a1), Slots::segmentOfPage(a2));
  ASSERT_NE(Slots::segmentOfPage(a1), Slots::segmentOfPage(b1));
  f.slots.releaseSlots(a1, 100);
  f.slots.releaseSlots(b1, 200);
  f.slots.releaseSlots(b2, 300);  // B's oldest release stays 200
  EXPECT_EQ(Slots::segmentOfPage(b1)->dirtyAt, 200u);
  EXPECT_EQ(f.slots.dirtySlots(), 90u);
  const std::size_t committed = f.source->committed();
  EXPECT_EQ(f.slots.decommitDirty(platform::Decommit::Lazy, 99), 100u) << "nothing that old";
  EXPECT_EQ(f.slots.dirtySlots(), 90u);
  EXPECT_EQ(f.slots.decommitDirty(platform::Decommit::Lazy, 150), 200u);
  EXPECT_EQ(f.slots.dirtySlots(), 60u) << "A's 30 went";
  EXPECT_EQ(f.source->committed(), committed - 30 * kSlot);
  EXPECT_EQ(f.source->cachedSegments(), 0u);
  // B is now empty: past the cutoff it goes to the cache whole, still committed.
  EXPECT_EQ(f.slots.decommitDirty(platform::Decommit::Lazy, 250), ~std::uint64_t{0});
  EXPECT_EQ(f.source->cachedSegments(), 1u);
  EXPECT_EQ(f.slots.dirtySlots(), 0u);
  EXPECT_EQ(f.source->committed(), committed - 30 * kSlot);
  EXPECT_EQ(f.slots.usedSlots(), 30u);
}

TEST(SegmentSlots, GiveAwayAndComeBackWarm) {
  Fixture f;
  Span span{};
  QueuedPage* p0 = f.slots.takeSlots(1, 0, span);
  QueuedPage* p1 = f.slots.takeSlots(5, 1, span);
  Segment* seg = Slots::segmentOfPage(p1);
  f.slots.releaseSlots(p0, 1);
  EXPECT_FALSE(Slots::isEmpty(seg));
  f.slots.releaseSlots(p1, 1);
  ASSERT_TRUE(Slots::isEmpty(seg));
  EXPECT_EQ(f.slots.dirtySlots(), 6u);
  const std::size_t committed = f.source->committed();
  EXPECT_EQ(committed, kHeader + 6 * kSlot);
  f.slots.giveAway(seg);
  EXPECT_EQ(seg->owner, nullptr);
  EXPECT_EQ(f.source->cachedSegments(), 1u);
  EXPECT_EQ(f.slots.dirtySlots(), 0u);
  EXPECT_EQ(f.source->committed(), committed) << "cached committed";
  // Another owner takes it warm: its dirty slots are reused without commits.
  Slots other(*f.source);
  QueuedPage* q = other.takeSlots(5, 1, span);
  EXPECT_EQ(Slots::segmentOfPage(q), seg);
  EXPECT_EQ(seg->owner, &other);
  EXPECT_FALSE(span.zero);
  EXPECT_EQ(other.dirtySlots(), 1u) << "slot 0 is still dirty";
  EXPECT_EQ(f.source->committed(), committed);
  f.source->purgeCache(0, true);
}

TEST(SegmentSlots, LargeSpansFromSlotOneNeverUseTheHeaderSlot) {
  Fixture f;
  Span span{};
  QueuedPage* big = f.slots.takeSlots(63, 1, span);
  Segment* seg = Slots::segmentOfPage(big);
  EXPECT_EQ(slotIndex(big), 1u);
  EXPECT_EQ(span.area, base(seg) + kSlot);
  EXPECT_EQ(span.bytes, 63 * kSlot);
  QueuedPage* next = f.slots.takeSlots(1, 1, span);
  EXPECT_NE(Slots::segmentOfPage(next), seg) << "slot 0 is free, but not for from = 1";
  EXPECT_EQ(slotIndex(next), 1u);
  for (int i = 0; i < 20; ++i) {
    QueuedPage* p = f.slots.takeSlots(static_cast<std::size_t>(i % 5 + 1), 1, span);
    ASSERT_NE(p, nullptr);
    EXPECT_NE(slotIndex(p), 0u);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(span.area) % kSlot, 0u);
  }
}
