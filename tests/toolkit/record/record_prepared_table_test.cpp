// PreparedTable (toolkit/record/recorder/prepared_table.hpp): the lock-free table of the large objects the
// recorder measures. Single-threaded semantics (add, find, remove, replace, a full window,
// forEach), then threads adding and removing their own objects concurrently while others
// look theirs up: nothing lost, nothing found that was not added.
#include "record/recorder/prepared_table.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <thread>
#include <vector>

namespace strata::record {
namespace {

TEST(PreparedTable, AddFindRemoveAndReplace) {
  PreparedTable t;
  ASSERT_TRUE(t.init(1024));
  EXPECT_EQ(t.find(0x10000), 0u);
  EXPECT_TRUE(t.add(0x10000, 8192));
  EXPECT_TRUE(t.add(0x20000, 16384));
  EXPECT_EQ(t.find(0x10000), 8192u);
  EXPECT_EQ(t.find(0x20000), 16384u);
  EXPECT_TRUE(t.add(0x10000, 12288));  // a new object at the same address replaces the old
  EXPECT_EQ(t.find(0x10000), 12288u);
  EXPECT_EQ(t.remove(0x10000), 12288u);
  EXPECT_EQ(t.find(0x10000), 0u);
  EXPECT_EQ(t.remove(0x10000), 0u);
  std::map<std::uintptr_t, std::uint64_t> seen;
  t.forEach([&](std::uintptr_t a, std::uint64_t s) { seen[a] = s; });
  EXPECT_EQ(seen, (std::map<std::uintptr_t, std::uint64_t>{{0x20000, 16384}}));
}

// A table whose every slot is taken refuses an add and records nothing; a removal makes room
// again (for the same address, whose window holds the slot it had).
TEST(PreparedTable, AFullWindowRefusesAndRemovalMakesRoom) {
  PreparedTable t;
  ASSERT_TRUE(t.init(PreparedTable::kWindow));  // 16 homes, 31 slots
  std::vector<std::uintptr_t> added;
  std::uintptr_t a = 0x1000;
  for (int i = 0; i < 1000; ++i, a += 0x1000)
    if (t.add(a, a)) added.push_back(a);
  EXPECT_EQ(added.size(), 2 * PreparedTable::kWindow - 1);  // every slot, and no more
  EXPECT_FALSE(t.add(a, 1));
  EXPECT_EQ(t.find(a), 0u);
  for (std::uintptr_t x : added) EXPECT_EQ(t.find(x), x);
  EXPECT_EQ(t.remove(added[3]), added[3]);
  EXPECT_EQ(t.find(added[3]), 0u);
  EXPECT_TRUE(t.add(added[3], 7));
  EXPECT_EQ(t.find(added[3]), 7u);
}

// Four threads, each adding, checking and removing objects at addresses of its own (as
// threads creating and freeing their own large objects do), all through one table.
TEST(PreparedTable, ThreadsAddAndRemoveTheirOwnObjectsConcurrently) {
  PreparedTable t;
  ASSERT_TRUE(t.init(1 << 12));
  constexpr int kThreads = 4, kRounds = 20000, kLive = 32;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int k = 0; k < kThreads; ++k) {
    threads.emplace_back([&, k] {
      std::vector<std::uintptr_t> live;
      std::uint64_t x = 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(k + 1);
      for (int r = 0; r < kRounds; ++r) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        // Addresses of this thread only: low bits carry the thread, 16-byte aligned.
        const std::uintptr_t a = ((x % 100000) << 8) | (static_cast<std::uintptr_t>(k) << 4);
        if (a == 0) continue;
        bool have = false;
        for (std::uintptr_t l : live) have |= l == a;
        if (!have && live.size() < kLive && t.add(a, a + 1)) live.push_back(a);
        for (std::uintptr_t l : live)
          if (t.find(l) != l + 1) ++wrong;
        if (live.size() == kLive || (x & 1)) {
          const std::uintptr_t gone = live.front();
          live.erase(live.begin());
          if (t.remove(gone) != gone + 1) ++wrong;
          if (t.find(gone) != 0) ++wrong;
        }
      }
      for (std::uintptr_t l : live)
        if (t.remove(l) != l + 1) ++wrong;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  int left = 0;
  t.forEach([&](std::uintptr_t, std::uint64_t) { ++left; });
  EXPECT_EQ(left, 0);
}

}  // namespace
}  // namespace strata::record
