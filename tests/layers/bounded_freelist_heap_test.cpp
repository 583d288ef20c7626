#include "strata/building/bounded_freelist_heap.hpp"

#include <gtest/gtest.h>

#include "strata/representation/size_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "common/differential.hpp"

using namespace strata;

static_assert(SizedHeap<BoundedFreelistHeap<4, SizeHeap<MallocHeap>>>);
static_assert(ClearableHeap<BoundedFreelistHeap<4, SbrkHeap<>>>);
static_assert(!ClearableHeap<BoundedFreelistHeap<4, MallocHeap>>);

TEST(BoundedFreelistHeap, KeepsAtMostMaxCountAndFreesTheRest) {
  BoundedFreelistHeap<4, MallocHeap> h;
  void* objs[10];
  for (auto& p : objs) p = h.malloc(64);
  const std::size_t one = h.getSize(objs[0]);
  const std::size_t held = h.bytesHeld();
  EXPECT_EQ(held, 10 * one);
  for (auto& p : objs) h.free(p);
  EXPECT_EQ(h.cached(), 4u);
  EXPECT_EQ(h.bytesHeld(), 4 * one);  // six went back to the parent
  // The four cached objects come back LIFO without asking the parent.
  EXPECT_EQ(h.malloc(64), objs[3]);
  EXPECT_EQ(h.malloc(64), objs[2]);
  EXPECT_EQ(h.malloc(64), objs[1]);
  EXPECT_EQ(h.malloc(64), objs[0]);
  EXPECT_EQ(h.cached(), 0u);
  EXPECT_EQ(h.bytesHeld(), 4 * one);
  void* fresh = h.malloc(64);  // from the parent
  EXPECT_EQ(h.bytesHeld(), 5 * one);
  h.free(fresh);
  for (int i = 0; i < 4; ++i) h.free(objs[i]);
  EXPECT_EQ(h.cached(), 4u);
  EXPECT_EQ(h.bytesHeld(), 4 * one);
}

TEST(BoundedFreelistHeap, ZeroBoundPassesEverythingThrough) {
  BoundedFreelistHeap<0, MallocHeap> h;
  void* p = h.malloc(32);
  EXPECT_GT(h.bytesHeld(), 0u);
  h.free(p);
  EXPECT_EQ(h.cached(), 0u);
  EXPECT_EQ(h.bytesHeld(), 0u);
  h.free(nullptr);
}

TEST(BoundedFreelistHeap, ReleaseAndDestructorGiveEverythingBack) {
  const std::size_t before = processAccount().held();
  {
    BoundedFreelistHeap<8, MallocHeap> h;
    void* objs[20];
    for (auto& p : objs) p = h.malloc(48);
    for (auto& p : objs) h.free(p);
    h.release();
    EXPECT_EQ(h.cached(), 0u);
    EXPECT_EQ(h.bytesHeld(), 0u);
    for (auto& p : objs) p = h.malloc(48);
    for (auto& p : objs) h.free(p);
    EXPECT_EQ(h.cached(), 8u);
  }
  EXPECT_EQ(processAccount().held(), before);
}

TEST(BoundedFreelistHeap, ClearForgetsTheCache) {
  BoundedFreelistHeap<8, SbrkHeap<>> h;
  void* a = h.malloc(32);
  h.free(a);
  EXPECT_EQ(h.cached(), 1u);
  h.clear();
  EXPECT_EQ(h.cached(), 0u);
  EXPECT_EQ(h.bytesHeld(), 0u);
  EXPECT_EQ(h.malloc(32), a);  // from the parent's fresh start
}

TEST(BoundedFreelistHeap, TinyRequestsStillHoldALink) {
  BoundedFreelistHeap<8, SbrkHeap<>> h;
  void* a = h.malloc(1);
  void* b = h.malloc(1);
  EXPECT_GE(static_cast<char*>(b) - static_cast<char*>(a), static_cast<std::ptrdiff_t>(sizeof(void*)));
}

TEST(BoundedFreelistHeap, DifferentialOneSize) {
  test::expectEverythingReturned<BoundedFreelistHeap<64, SizeHeap<MallocHeap>>>(
      {.seed = 41, .ops = 300'000, .sizes = test::SizeMix::Small, .useRealloc = false,
       .minRequest = 128});
  test::expectEverythingReturned<BoundedFreelistHeap<1000, SizeHeap<SbrkHeap<>>>>(
      {.seed = 42, .ops = 300'000, .sizes = test::SizeMix::Small, .useRealloc = false,
       .useClear = true, .minRequest = 128});
}
