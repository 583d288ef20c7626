#include <gtest/gtest.h>

#include "strata/building/freelist_heap.hpp"
#include "strata/representation/size_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/null_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "common/differential.hpp"

using namespace strata;

TEST(FreelistHeap, ReusesFreedObjectsLifo) {
  FreelistHeap<MallocHeap> h;
  void* a = h.malloc(64);
  void* b = h.malloc(64);
  const std::size_t held = h.bytesHeld();
  h.free(a);
  h.free(b);
  EXPECT_EQ(h.malloc(64), b);
  EXPECT_EQ(h.malloc(64), a);
  EXPECT_EQ(h.bytesHeld(), held);  // reuse asked nothing of the parent
  h.free(a);
  h.free(b);
}

TEST(FreelistHeap, ReleaseAndDestructorGiveEverythingBack) {
  const std::size_t before = processAccount().held();
  {
    FreelistHeap<MallocHeap> h;
    for (int i = 0; i < 100; ++i) h.free(h.malloc(48));
    void* keep[10];
    for (auto& p : keep) p = h.malloc(48);
    for (auto& p : keep) h.free(p);
    h.release();
    EXPECT_EQ(h.bytesHeld(), 0u);
    for (auto& p : keep) p = h.malloc(48);
    for (auto& p : keep) h.free(p);
  }
  EXPECT_EQ(processAccount().held(), before);
}

TEST(FreelistHeap, OverNullHeapIsAStore) {
  FreelistHeap<NullHeap<>> store;
  EXPECT_EQ(store.malloc(32), nullptr);
  alignas(16) char buf[32];
  store.free(buf);
  EXPECT_EQ(store.malloc(32), buf);
  EXPECT_EQ(store.malloc(32), nullptr);
}

TEST(FreelistHeap, ClearForgetsCacheWhenParentClears) {
  FreelistHeap<SbrkHeap<>> h;
  void* a = h.malloc(32);
  h.free(a);
  h.clear();
  EXPECT_EQ(h.bytesHeld(), 0u);
  EXPECT_EQ(h.malloc(32), a);  // from the parent's fresh start, not a stale list
}

TEST(FreelistHeap, DifferentialOneSize) {
  // A freelist serves one object size; run the harness with fixed-size objects.
  test::expectEverythingReturned<FreelistHeap<SizeHeap<MallocHeap>>>(
      {.seed = 5, .ops = 200'000, .sizes = test::SizeMix::Small, .useRealloc = false,
       .minRequest = 128});
}
