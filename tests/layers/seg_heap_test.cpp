#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>

#include "strata/building/adapt_heap.hpp"
#include "strata/building/freelist_heap.hpp"
#include "strata/combining/seg_heap.hpp"
#include "strata/representation/size_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "common/differential.hpp"

using namespace strata;

// Eight power-of-two classes, 16 .. 2048.
using Seg = SegHeap<8, PowerOfTwoClasses<4>, DLListHeap, SizeHeap<MallocHeap>>;
static_assert(Seg::MinClassSize == 16 && Seg::MaxClassSize == 2048);
static_assert(SizedHeap<Seg> && Seg::Alignment == 16);
template <class H>
concept CanRemove = requires(H& h, void* p) { h.remove(p); };
static_assert(CanRemove<Seg>);
// Bins that cannot remove a given object give a SegHeap without remove().
using FreelistSeg = SegHeap<8, PowerOfTwoClasses<4>, FreelistHeap, SizeHeap<MallocHeap>>;
static_assert(!CanRemove<FreelistSeg>);

// LeaClasses: exact 16-byte classes to 512, then four per power of two.
static_assert(LeaClasses::class2size(0) == 16 && LeaClasses::class2size(31) == 512);
static_assert(LeaClasses::class2size(32) == 640 && LeaClasses::class2size(35) == 1024);
static_assert(LeaClasses::class2size(36) == 1280 && LeaClasses::class2size(63) == (128u << 10));
static_assert(LeaClasses::size2class(0) == 0 && LeaClasses::size2class(16) == 0);
static_assert(LeaClasses::size2class(17) == 1 && LeaClasses::size2class(512) == 31);
static_assert(LeaClasses::size2class(513) == 32 && LeaClasses::size2class(1025) == 36);

TEST(LeaClasses, SmallestClassThatHoldsEachSize) {
  for (std::size_t n = 1; n <= (std::size_t{1} << 22); n += (n < 4096 ? 1 : 61)) {
    const unsigned c = LeaClasses::size2class(n);
    ASSERT_GE(LeaClasses::class2size(c), n) << n;
    if (c > 0) {
      ASSERT_LT(LeaClasses::class2size(c - 1), n) << n;
    }
  }
  for (unsigned c = 0; c < 200; ++c) {
    ASSERT_EQ(LeaClasses::size2class(LeaClasses::class2size(c)), c);
    ASSERT_LT(LeaClasses::class2size(c), LeaClasses::class2size(c + 1));
  }
}

TEST(SegHeap, SearchesLargerBins) {
  Seg h;
  void* a = h.malloc(256);
  h.free(a);
  const std::size_t held = h.bytesHeld();
  void* b = h.malloc(20);  // class 32 is empty; the 256 bin is not
  EXPECT_EQ(b, a);
  EXPECT_EQ(h.bytesHeld(), held);
  h.free(b);
}

TEST(SegHeap, BinsHoldOnlyObjectsAtLeastTheirClass) {
  Seg h;
  void* a = h.malloc(48);  // 48 usable: kept in the 32 bin, not the 64 one
  EXPECT_EQ(h.getSize(a), 48u);
  h.free(a);
  void* b = h.malloc(50);  // class 64: must not get the 48-byte object
  EXPECT_NE(b, a);
  EXPECT_GE(h.getSize(b), 50u);
  EXPECT_EQ(h.malloc(32), a);
  h.free(a);
  h.free(b);
}

TEST(SegHeap, FifoWithinABin) {
  Seg h;
  void* a = h.malloc(128);
  void* b = h.malloc(128);
  h.free(a);
  h.free(b);
  EXPECT_EQ(h.malloc(100), a);
  EXPECT_EQ(h.malloc(100), b);
  h.free(a);
  h.free(b);
}

TEST(SegHeap, TakesAFittingObjectFromTheBinBelowTheRequestsClassFirst) {
  Seg h;
  void* big = h.malloc(1000);  // 1008 usable: kept in the 512 bin
  void* fits = h.malloc(200);  // 208 usable: kept in the 128 bin
  void* small = h.malloc(140);  // 144 usable: the 128 bin too, but too small for 150
  h.free(big);
  h.free(small);
  h.free(fits);
  const std::size_t held = h.bytesHeld();
  // 150 is class 256: its own and larger bins offer only the 1008-byte object, but the
  // 128 bin holds a 208-byte one that fits better. The too-small one is passed over.
  EXPECT_EQ(h.mallocFromBins(150), fits);
  EXPECT_EQ(h.malloc(150), big) << "no other object of the 128 bin fits";
  EXPECT_EQ(h.malloc(144), small);
  EXPECT_EQ(h.bytesHeld(), held);
  h.free(big);
  h.free(small);
  h.free(fits);
}

TEST(SegHeap, TheBinBelowIsOnlyLookedIntoALittle) {
  Seg h;
  void* tooSmall[6];
  for (auto& p : tooSmall) p = h.malloc(140);  // 144 usable, the 128 bin
  void* fits = h.malloc(200);
  for (auto* p : tooSmall) h.free(p);
  h.free(fits);  // the youngest of the 128 bin: behind six that do not fit
  EXPECT_EQ(h.mallocFromBins(150), nullptr) << "at most four objects are looked at";
  // The ones looked at moved to the young end, so the next try reaches the fitting one.
  EXPECT_EQ(h.mallocFromBins(150), fits);
  for (int i = 0; i < 6; ++i) EXPECT_NE(h.mallocFromBins(144), nullptr) << i;
  EXPECT_EQ(h.mallocFromBins(16), nullptr);
  for (auto* p : tooSmall) h.free(p);
  h.free(fits);
}

TEST(SegHeap, MallocFromBinsNeverAsksTheParent) {
  Seg h;
  EXPECT_EQ(h.mallocFromBins(64), nullptr);
  EXPECT_EQ(h.bytesHeld(), 0u);
  void* a = h.malloc(64);
  h.free(a);
  EXPECT_EQ(h.mallocFromBins(128), nullptr);  // only a smaller object is stored
  EXPECT_EQ(h.mallocFromBins(64), a);
  EXPECT_EQ(h.mallocFromBins(5000), nullptr);  // beyond the classes
  h.free(a);
}

TEST(SegHeap, RemoveTakesAnObjectOutOfItsBin) {
  Seg h;
  void* a = h.malloc(300);  // 304 usable: both kept in the 256 bin
  void* b = h.malloc(300);
  h.free(a);
  h.free(b);
  h.remove(a);
  EXPECT_EQ(h.mallocFromBins(256), b);
  EXPECT_EQ(h.mallocFromBins(16), nullptr);
  h.free(a);
  h.remove(a);  // the only member
  EXPECT_EQ(h.mallocFromBins(16), nullptr) << "the bitmap must not point at an emptied bin";
  h.free(a);
  h.free(b);
}

TEST(SegHeap, ObjectsBeyondTheLastClassAreKeptInTheLastBin) {
  Seg h;
  void* big = h.malloc(5000);
  ASSERT_NE(big, nullptr);
  h.free(big);
  const std::size_t held = h.bytesHeld();
  EXPECT_GT(held, 5000u);  // not given back to the parent
  void* again = h.malloc(5000);  // requests beyond the classes go to the parent
  EXPECT_NE(again, big);
  EXPECT_EQ(h.malloc(2000), big);  // but the stored object serves class requests
  h.free(again);
  h.free(big);
}

TEST(SegHeap, BinsThatCannotReportEmptinessStillWork) {
  FreelistSeg h;
  void* a = h.malloc(200);
  h.free(a);
  EXPECT_EQ(h.malloc(16), a);
  EXPECT_EQ(h.mallocFromBins(16), nullptr);  // the stale bit is dropped on the way
  void* b = h.malloc(16);
  EXPECT_NE(b, a);
  h.free(a);
  h.free(b);
}

TEST(SegHeap, ObjectsSmallerThanEveryClassGoBackToTheParent) {
  Seg h;
  void* p = h.malloc(0);  // SizeHeap: 0 usable bytes, below class 0
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(h.getSize(p), 0u);
  h.free(p);
  EXPECT_EQ(h.bytesHeld(), 0u);
  EXPECT_EQ(h.mallocFromBins(0), nullptr);
}

TEST(SegHeap, ClearEmptiesBinsAndParent) {
  SegHeap<8, PowerOfTwoClasses<4>, DLListHeap, SizeHeap<SbrkHeap<>>> h;
  void* a = h.malloc(100);
  h.free(a);
  h.clear();
  EXPECT_EQ(h.bytesHeld(), 0u);
  EXPECT_EQ(h.mallocFromBins(16), nullptr);
}

TEST(SegHeap, HugeRequestsAreNull) {
  SegHeap<64, LeaClasses, DLListHeap, SizeHeap<SbrkHeap<>>> h;
  for (std::size_t n : {SIZE_MAX, SIZE_MAX - 16, std::size_t{1} << 50}) {
    errno = 0;
    EXPECT_EQ(h.malloc(n), nullptr) << n;
    EXPECT_EQ(errno, ENOMEM);
  }
}

TEST(SegHeap, DestructorGivesBinsBack) {
  const std::size_t before = processAccount().held();
  {
    Seg h;
    void* p[64];
    for (std::size_t i = 0; i < 64; ++i) p[i] = h.malloc(16 + 97 * i);
    for (auto* q : p) h.free(q);
    EXPECT_GT(h.bytesHeld(), 0u);
  }
  EXPECT_EQ(processAccount().held(), before);
}

// A SegHeap without coalescing reuses whole objects: the harness checks that a reused object
// is never smaller than the request and never overlaps another.
TEST(SegHeap, DifferentialLeaClasses) {
  test::expectEverythingReturned<SegHeap<64, LeaClasses, DLListHeap, SizeHeap<MallocHeap>>>(
      {.seed = 51, .ops = 300'000});
}

TEST(SegHeap, DifferentialPowerOfTwoClassesSmall) {
  test::expectEverythingReturned<Seg>(
      {.seed = 52, .ops = 300'000, .maxLive = 10000, .sizes = test::SizeMix::Small});
}
