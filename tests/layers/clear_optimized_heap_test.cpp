#include "strata/reap/clear_optimized_heap.hpp"

#include <gtest/gtest.h>

#include "strata/reap/reap.hpp"
#include "common/differential.hpp"

using namespace strata;

using COH = ClearOptimizedHeap<ReapRegion<MallocHeap>, ReapStore>;
static_assert(SizedHeap<COH> && ClearableHeap<COH> && COH::Alignment == 16);

TEST(ClearOptimizedHeap, BumpsUntilSomethingIsFreed) {
  COH h;
  auto* a = static_cast<std::byte*>(h.malloc(24));
  auto* b = static_cast<std::byte*>(h.malloc(24));
  EXPECT_EQ(b - a, 32);
  EXPECT_FALSE(h.anyFreed());
  h.free(a);
  EXPECT_TRUE(h.anyFreed());
  // Served from the general heap now: the freed block comes back.
  EXPECT_EQ(h.malloc(24), a);
  // Nothing fits in the general heap: back to the region's bump pointer.
  auto* c = static_cast<std::byte*>(h.malloc(24));
  EXPECT_EQ(c - b, 32);
}

TEST(ClearOptimizedHeap, ClearReturnsToRegionMode) {
  COH h;
  void* first = h.malloc(100);
  h.free(h.malloc(100));
  EXPECT_TRUE(h.anyFreed());
  h.clear();
  EXPECT_FALSE(h.anyFreed());
  EXPECT_EQ(h.region().chunkBytes(), 0u);
  void* again = h.malloc(100);
  EXPECT_NE(again, nullptr);
  (void)first;
}

TEST(ClearOptimizedHeap, Differential) {
  test::DiffConfig cfg;
  cfg.sizes = test::SizeMix::Medium;
  cfg.ops = detail::kAsan ? 100'000 : 300'000;
  cfg.maxLive = 1000;
  cfg.useClear = true;
  test::expectEverythingReturned<COH>(cfg);
}
