#include <gtest/gtest.h>

#include "strata/building/freelist_heap.hpp"
#include "strata/combining/size_classes.hpp"
#include "strata/combining/strict_seg_heap.hpp"
#include "strata/representation/size_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "common/differential.hpp"

using namespace strata;

static_assert(PowerOfTwoClasses<4>::size2class(1) == 0);
static_assert(PowerOfTwoClasses<4>::size2class(16) == 0);
static_assert(PowerOfTwoClasses<4>::size2class(17) == 1);
static_assert(PowerOfTwoClasses<4>::size2class(32) == 1);
static_assert(PowerOfTwoClasses<4>::size2class(33) == 2);
static_assert(PowerOfTwoClasses<4>::class2size(3) == 128);
static_assert(LinearClasses<16>::size2class(16) == 0);
static_assert(LinearClasses<16>::size2class(17) == 1);
static_assert(LinearClasses<16>::class2size(3) == 64);

// Eight power-of-two classes: 16 .. 2048; bigger objects go to the parent directly.
using Seg = StrictSegHeap<8, PowerOfTwoClasses<4>, FreelistHeap, SizeHeap<SbrkHeap<>>>;
static_assert(Seg::MaxClassSize == 2048);

TEST(StrictSegHeap, RoundsToClassAndReusesWithinClassOnly) {
  Seg h;
  void* a = h.malloc(20);
  EXPECT_EQ(h.getSize(a), 32u);
  h.free(a);
  EXPECT_EQ(h.malloc(30), a);    // same class: reused
  void* b = h.malloc(40);        // class 64: not served from the 32 bin
  EXPECT_NE(b, a);
  EXPECT_EQ(h.getSize(b), 64u);
  h.free(a);
  h.free(b);
}

TEST(StrictSegHeap, BigObjectsBypassBins) {
  Seg h;
  void* big = h.malloc(5000);
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(h.getSize(big), 5008u);  // parent's rounding, not a class
  h.free(big);
  EXPECT_NE(h.malloc(5000), big);  // SbrkHeap never reuses: bins did not keep it
}

TEST(StrictSegHeap, ReleaseDrainsBinsToParent) {
  StrictSegHeap<8, PowerOfTwoClasses<4>, FreelistHeap, SizeHeap<MallocHeap>> h;
  void* p[50];
  for (auto& q : p) q = h.malloc(100);
  for (auto& q : p) h.free(q);
  EXPECT_GT(h.bytesHeld(), 0u);
  h.release();
  EXPECT_EQ(h.bytesHeld(), 0u);
}

TEST(StrictSegHeap, Differential) {
  test::expectEverythingReturned<StrictSegHeap<8, PowerOfTwoClasses<4>, FreelistHeap, SizeHeap<MallocHeap>>>(
      {.seed = 21, .ops = 300'000});
}
