#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>

#include "strata/building/adapt_heap.hpp"
#include "strata/building/coalesce_heap.hpp"
#include "strata/combining/seg_heap.hpp"
#include "strata/combining/threshold_heap.hpp"
#include "strata/representation/coalesceable_heap.hpp"
#include "strata/representation/size_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/utility/ansi_wrapper.hpp"
#include "common/differential.hpp"

using namespace strata;

template <class Top>
using Medium =
    CoalesceHeap<SegHeap<64, ShiftedClasses<LeaClasses, 8>, DLListHeap, CoalesceableHeap<Top>>>;
using Threshold = ThresholdHeap<Medium<SbrkHeap<>>>;
using Tags = CoalesceableHeap<SbrkHeap<>>;

// Requests up to 72 bytes (what a 64-byte request gets over boundary tags) use quick lists;
// over SizeHeap, up to 64.
static_assert(SizedHeap<Threshold> && Threshold::Alignment == 16 && Threshold::QuickListMax == 72);
static_assert(
    ThresholdHeap<SegHeap<64, LeaClasses, DLListHeap, SizeHeap<SbrkHeap<>>>>::QuickListMax == 64);
static_assert(ClearableHeap<Threshold>);
// The medium heap must be able to serve from free memory alone.
static_assert(!BinnedHeap<SizeHeap<SbrkHeap<>>>);
static_assert(BinnedHeap<Medium<SbrkHeap<>>>);

TEST(ThresholdHeap, SmallObjectsComeBackFromTheirQuickListUncoalesced) {
  Threshold h;
  void* a = h.malloc(24);
  void* b = h.malloc(24);
  void* c = h.malloc(24);
  EXPECT_EQ(h.getSize(a), 24u);  // the smallest block: 32 bytes
  h.free(b);
  // b stays allocated as far as the medium heap knows: a and c do not merge with it.
  EXPECT_FALSE(Tags::isFree(b));
  EXPECT_FALSE(Tags::isPrevFree(c));
  h.free(a);
  EXPECT_FALSE(Tags::isFree(a));
  EXPECT_EQ(h.malloc(20), a);  // LIFO quick list
  EXPECT_EQ(h.malloc(1), b);
  h.free(a);
  h.free(b);
  h.free(c);
}

TEST(ThresholdHeap, QuickListsAreExactSize) {
  Threshold h;
  void* a = h.malloc(48);  // 56 usable
  h.free(a);
  void* b = h.malloc(40);  // 40 usable, a different list
  EXPECT_NE(b, a);
  void* c = h.malloc(57);  // 72 usable, another
  EXPECT_NE(c, a);
  EXPECT_EQ(h.malloc(41), a);  // 56 usable: a's list
  h.free(a);
  h.free(b);
  h.free(c);
}

TEST(ThresholdHeap, QuickListsServeEveryRequestUpToTheUsableSizeOfQuickMax) {
  Threshold h;
  void* a = h.malloc(72);
  void* guard = h.malloc(16);
  EXPECT_EQ(h.getSize(a), 72u);
  h.free(a);
  EXPECT_FALSE(Tags::isFree(a)) << "72 usable bytes: a quick-list object";
  EXPECT_EQ(h.malloc(65), a);
  void* m = h.malloc(73);  // 88 usable: a medium object, coalesced at once
  h.free(m);
  EXPECT_TRUE(Tags::isFree(m));
  h.free(a);
  h.free(guard);
}

TEST(ThresholdHeap, MediumMissFlushesQuickListsBeforeGrowing) {
  Threshold h;
  void* small[100];
  for (auto& p : small) p = h.malloc(40);  // 100 adjacent 48-byte blocks, one run
  void* guard = h.malloc(200);
  for (auto& p : small) h.free(p);
  for (auto* p : small) ASSERT_FALSE(Tags::isFree(p));
  const std::size_t held = h.bytesHeld();
  // Nothing in the medium bins fits 4000 bytes; after the flush the 100 blocks are one.
  void* medium = h.malloc(4000);
  EXPECT_EQ(medium, small[0]);
  EXPECT_EQ(h.bytesHeld(), held) << "the heap grew although flushed memory fitted";
  // The flush emptied the quick lists: the small class is served by splitting now.
  void* s = h.malloc(40);
  EXPECT_EQ(s, Tags::next(medium));
  h.free(s);
  h.free(medium);
  h.free(guard);
}

TEST(ThresholdHeap, MediumHitInTheBinsLeavesQuickListsAlone) {
  Threshold h;
  void* m = h.malloc(1000);
  void* s = h.malloc(32);
  void* guard = h.malloc(200);
  h.free(m);
  h.free(s);
  EXPECT_EQ(h.malloc(800), m);  // from the bins (1000 usable, kept in the 904 bin)
  EXPECT_FALSE(Tags::isFree(s));
  EXPECT_EQ(h.malloc(32), s);  // still on its quick list
  h.free(m);
  h.free(s);
  h.free(guard);
}

TEST(ThresholdHeap, MediumMissWithNothingToFlushGrows) {
  Threshold h;
  void* a = h.malloc(1000);
  const std::size_t held = h.bytesHeld();
  void* b = h.malloc(1000);
  EXPECT_NE(b, nullptr);
  EXPECT_GT(h.bytesHeld(), held);
  h.free(a);
  h.free(b);
}

TEST(ThresholdHeap, ExplicitFlushCoalesces) {
  Threshold h;
  void* a = h.malloc(16);
  void* b = h.malloc(16);
  void* guard = h.malloc(200);
  h.free(a);
  h.free(b);
  h.flush();
  EXPECT_TRUE(Tags::isFree(a));
  EXPECT_EQ(Tags::next(a), guard);
  h.free(guard);
}

TEST(ThresholdHeap, HugeRequestsAreNull) {
  Threshold h;
  for (std::size_t n : {SIZE_MAX, SIZE_MAX - 16, std::size_t{1} << 50}) {
    errno = 0;
    EXPECT_EQ(h.malloc(n), nullptr) << n;
    EXPECT_EQ(errno, ENOMEM);
  }
}

// Over MallocHeap, everything is returned only if the destructor flushed the quick lists and
// every run coalesced back into one block.
TEST(ThresholdHeap, DifferentialEverythingReturnedOverMalloc) {
  test::expectEverythingReturned<ANSIWrapper<ThresholdHeap<Medium<MallocHeap>>>>(
      {.seed = 71, .ops = 300'000});
}

TEST(ThresholdHeap, DifferentialSmallWithClear) {
  test::expectEverythingReturned<ANSIWrapper<Threshold>>(
      {.seed = 72, .ops = 300'000, .maxLive = 10000, .sizes = test::SizeMix::Small,
       .useClear = true});
}
