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
#include "support/differential.hpp"

using namespace strata;

template <class Top>
using Medium = CoalesceHeap<SegHeap<64, LeaClasses, DLListHeap, CoalesceableHeap<Top>>>;
using Threshold = ThresholdHeap<Medium<SbrkHeap<>>>;
using Tags = CoalesceableHeap<SbrkHeap<>>;

static_assert(SizedHeap<Threshold> && Threshold::Alignment == 16 && Threshold::QuickListMax == 64);
static_assert(ClearableHeap<Threshold>);
// The medium heap must be able to serve from free memory alone.
static_assert(!BinnedHeap<SizeHeap<SbrkHeap<>>>);
static_assert(BinnedHeap<Medium<SbrkHeap<>>>);

TEST(ThresholdHeap, SmallObjectsComeBackFromTheirQuickListUncoalesced) {
  Threshold h;
  void* a = h.malloc(24);
  void* b = h.malloc(24);
  void* c = h.malloc(24);
  EXPECT_EQ(h.getSize(a), 32u);
  h.free(b);
  // b stays allocated as far as the medium heap knows: a and c do not merge with it.
  EXPECT_FALSE(Tags::isFree(b));
  h.free(a);
  EXPECT_FALSE(Tags::isFree(a));
  EXPECT_EQ(h.malloc(20), a);  // LIFO quick list
  EXPECT_EQ(h.malloc(32), b);
  h.free(a);
  h.free(b);
  h.free(c);
}

TEST(ThresholdHeap, QuickListsAreExactSize) {
  Threshold h;
  void* a = h.malloc(48);
  h.free(a);
  void* b = h.malloc(32);  // a different class: not a's list
  EXPECT_NE(b, a);
  EXPECT_EQ(h.malloc(48), a);
  h.free(a);
  h.free(b);
}

TEST(ThresholdHeap, MediumMissFlushesQuickListsBeforeGrowing) {
  Threshold h;
  void* small[100];
  for (auto& p : small) p = h.malloc(32);  // 100 adjacent 48-byte blocks, one run
  void* guard = h.malloc(200);
  for (auto& p : small) h.free(p);
  for (auto* p : small) ASSERT_FALSE(Tags::isFree(p));
  const std::size_t held = h.bytesHeld();
  // Nothing in the medium bins fits 4000 bytes; after the flush the 100 blocks are one.
  void* medium = h.malloc(4000);
  EXPECT_EQ(medium, small[0]);
  EXPECT_EQ(h.bytesHeld(), held) << "the heap grew although flushed memory fitted";
  // The flush emptied the quick lists: the small class is served by splitting now.
  void* s = h.malloc(32);
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
  EXPECT_EQ(h.malloc(800), m);  // from the bins (1008 bytes, kept in the 896 bin)
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
