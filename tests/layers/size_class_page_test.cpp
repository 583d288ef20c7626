#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <set>
#include <thread>
#include <vector>

#include "strata/building/size_class_page.hpp"

using namespace strata;

namespace {
struct Area {
  alignas(64) std::byte bytes[65536];
};
}  // namespace

TEST(SizeClassPage, CarvesLazilyAndHandsOutEveryBlockOnce) {
  auto area = std::make_unique<Area>();
  SizeClassPage page;
  page.init(area->bytes, sizeof area->bytes, 48, 2);
  EXPECT_EQ(page.reserved, 65536u / 48);
  EXPECT_EQ(page.pop(), nullptr) << "nothing is carved before extend";
  ASSERT_TRUE(page.extend());
  EXPECT_EQ(page.capacity, 4096u / 48) << "about an OS page at a time";
  std::set<void*> seen;
  while (true) {
    void* p = page.pop();
    if (p == nullptr && !page.extend()) break;
    if (p == nullptr) continue;
    EXPECT_TRUE(seen.insert(p).second);
    EXPECT_TRUE(page.contains(p));
    EXPECT_EQ((static_cast<std::byte*>(p) - area->bytes) % 48, 0);
  }
  EXPECT_EQ(seen.size(), page.reserved);
  EXPECT_EQ(page.used, page.reserved);
  for (void* p : seen) page.pushLocal(p);
  EXPECT_EQ(page.used, 0u);
}

TEST(SizeClassPage, RemoteFreesAreCollectedByTheOwner) {
  auto area = std::make_unique<Area>();
  SizeClassPage page;
  page.init(area->bytes, sizeof area->bytes, 64, 3);
  std::vector<void*> blocks;
  while (true) {
    void* p = page.pop();
    if (p == nullptr && !page.extend()) break;
    if (p) blocks.push_back(p);
  }
  const std::size_t n = blocks.size();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (std::size_t i = t; i < n; i += 4) EXPECT_FALSE(page.pushRemote(blocks[i]));
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(page.free, nullptr);
  EXPECT_EQ(page.collect(), n);
  EXPECT_EQ(page.used, 0u);
  std::set<void*> back;
  while (void* p = page.pop()) back.insert(p);
  EXPECT_EQ(back.size(), n);
}

TEST(SizeClassPage, ParkingAndClaiming) {
  auto area = std::make_unique<Area>();
  SizeClassPage page;
  page.init(area->bytes, sizeof area->bytes, 1024, 9);
  std::vector<void*> blocks;
  while (true) {
    void* p = page.pop();
    if (p == nullptr && !page.extend()) break;
    if (p) blocks.push_back(p);
  }
  ASSERT_TRUE(page.tryPark());
  EXPECT_EQ(page.parkState(), SizeClassPage::kParked);
  EXPECT_TRUE(page.pushRemote(blocks[0])) << "the first free into a parked page claims it";
  EXPECT_EQ(page.parkState(), SizeClassPage::kClaimed);
  EXPECT_FALSE(page.pushRemote(blocks[1]));
  EXPECT_FALSE(page.tryUnpark()) << "a claimed page comes back through the reclaim stack";
  page.unclaim();
  EXPECT_EQ(page.parkState(), SizeClassPage::kNormal);
  EXPECT_EQ(page.collect(), 2u);
  page.pop();
  page.pop();
  page.pushRemote(blocks[2]);
  EXPECT_FALSE(page.tryPark()) << "cannot park while blocks wait on the thread-free list";
  EXPECT_EQ(page.collect(), 1u);
  page.pop();
  ASSERT_TRUE(page.tryPark());
  EXPECT_TRUE(page.tryUnpark());
  EXPECT_EQ(page.parkState(), SizeClassPage::kNormal);
}

TEST(SizeClassPage, InteriorPointersOfAlignedBlocks) {
  auto area = std::make_unique<Area>();
  SizeClassPage page;
  page.init(area->bytes, sizeof area->bytes, 96, 5);
  page.extend();
  void* a = page.pop();
  void* b = page.pop();
  EXPECT_EQ(page.blockOf(b), b);
  EXPECT_EQ(page.usableFrom(b), 96u);
  page.hasAligned = true;
  void* inside = static_cast<std::byte*>(b) + 32;
  EXPECT_EQ(page.blockOf(inside), b);
  EXPECT_EQ(page.usableFrom(inside), 64u);
  EXPECT_EQ(page.blockOf(a), a);
}
