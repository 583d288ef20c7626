#include "strata/reap/region_heap.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "strata/top/malloc_heap.hpp"

using namespace strata;

using Region = RegionHeap<MallocHeap>;
static_assert(SizedHeap<Region> && ClearableHeap<Region> && Region::Alignment == 16);

TEST(RegionHeap, RemembersObjectsAndClearsInOneWalk) {
  const std::size_t before = processAccount().held();
  Region r;
  EXPECT_TRUE(r.empty());
  void* ps[100];
  for (int i = 0; i < 100; ++i) {
    ps[i] = r.malloc(static_cast<std::size_t>(i) * 10 + 1);
    ASSERT_NE(ps[i], nullptr);
    EXPECT_TRUE(detail::is_aligned(ps[i], 16));
    EXPECT_GE(Region::getSize(ps[i]), static_cast<std::size_t>(i) * 10 + 1);
    std::memset(ps[i], i, static_cast<std::size_t>(i) * 10 + 1);
  }
  EXPECT_FALSE(r.empty());
  const std::size_t held = processAccount().held();
  EXPECT_GT(held, before);
  r.free(ps[5]);  // a region does not free single objects
  EXPECT_EQ(processAccount().held(), held);
  EXPECT_EQ(static_cast<unsigned char*>(ps[5])[0], 5);
  r.clear();
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(processAccount().held(), before);
}

TEST(RegionHeap, FindLocatesTheObjectHoldingAnAddress) {
  Region r;
  auto* a = static_cast<std::byte*>(r.malloc(100));
  auto* b = static_cast<std::byte*>(r.malloc(1000));
  std::byte* start;
  std::size_t size;
  ASSERT_TRUE(r.find(a + 50, start, size));
  EXPECT_EQ(start, a);
  EXPECT_EQ(size, 112u);
  ASSERT_TRUE(r.find(b + 999, start, size));
  EXPECT_EQ(start, b);
  int outside = 0;
  EXPECT_FALSE(r.find(&outside, start, size));
  EXPECT_FALSE(r.find(a + 112, start, size) && start == a);
}

TEST(RegionHeap, DestructorGivesEverythingBack) {
  const std::size_t before = processAccount().held();
  {
    Region r;
    for (int i = 0; i < 1000; ++i) ASSERT_NE(r.malloc(64), nullptr);
  }
  EXPECT_EQ(processAccount().held(), before);
}

TEST(RegionHeap, OverflowGivesEnomem) {
  Region r;
  errno = 0;
  EXPECT_EQ(r.malloc(SIZE_MAX - 4), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(r.malloc(SIZE_MAX - 20), nullptr);
  EXPECT_EQ(errno, ENOMEM);
}
