// The recorder's address map (toolkit/record/recorder/object_map.hpp) on its own: packed and rare entries
// round trip, replacing one by the other, erase and take, forEach and retainRare, a long
// random run of inserts and removals against std::unordered_map (growth and backward-shift
// deletion included), and concurrent use as the recorder makes it: several threads under
// one lock inserting, looking up and removing their own addresses and addresses handed over
// by another thread, while the table grows and every thread prefetches and touches slots
// without the lock.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>
#include <vector>

#include "record/recorder/lock.hpp"
#include "record/recorder/object_map.hpp"

namespace {

using strata::record::Entry;
using strata::record::kNoObject;
using strata::record::makeMeta;
using strata::record::metaAlign;
using strata::record::metaIsReap;
using strata::record::metaReap;
using strata::record::ObjectMap;

bool same(const Entry& a, const Entry& b) {
  return a.addr == b.addr && a.id == b.id && a.size == b.size && a.meta == b.meta;
}

TEST(RecordObjectMap, PlainAndRareEntriesRoundTrip) {
  ObjectMap map;
  ASSERT_TRUE(map.init(64));
  const Entry entries[] = {
      {0x1000, 7, 100, 0},                                  // plain: packed
      {0x2000, (std::uint64_t{1} << 40) - 1, 8, 0},         // id too big to pack
      {0x3000, 9, std::uint64_t{1} << 23, 0},               // size too big to pack
      {0x4000, 10, 64, makeMeta(kNoObject, false, 6)},      // aligned
      {0x5000, 11, 3, makeMeta(kNoObject, true, 0)},        // a reap, child of reap 3
      {0x6000, 12, 24, makeMeta(11, false, 0)},             // an object in reap 11
  };
  for (const Entry& e : entries) ASSERT_TRUE(map.insert(e));
  EXPECT_EQ(map.size(), 6u);
  for (const Entry& e : entries) {
    Entry got{};
    ASSERT_TRUE(map.find(e.addr, &got)) << std::hex << e.addr;
    EXPECT_TRUE(same(got, e)) << std::hex << e.addr;
  }
  Entry got{};
  EXPECT_TRUE(map.find(0x6000, &got));
  EXPECT_EQ(metaReap(got.meta), 11u);
  EXPECT_FALSE(metaIsReap(got.meta));
  EXPECT_TRUE(map.find(0x4000, &got));
  EXPECT_EQ(metaAlign(got.meta), 6u);
  EXPECT_FALSE(map.find(0x7000, &got));

  // Every rare entry is in the side table; the plain one is not.
  std::size_t rare = 0;
  for (std::size_t i = 0; i < map.rareCapacity(); ++i) rare += map.rareSlots()[i].addr != 0;
  EXPECT_EQ(rare, 5u);

  EXPECT_TRUE(map.take(0x4000, &got));
  EXPECT_TRUE(same(got, entries[3]));
  EXPECT_FALSE(map.find(0x4000, &got));
  map.erase(0x6000);
  EXPECT_FALSE(map.find(0x6000, &got));
  EXPECT_EQ(map.size(), 4u);
}

TEST(RecordObjectMap, ReplacingSwitchesBetweenPackedAndRare) {
  ObjectMap map;
  ASSERT_TRUE(map.init(64));
  ASSERT_TRUE(map.insert({0x1000, 1, 10, makeMeta(kNoObject, false, 5)}));  // rare
  ASSERT_TRUE(map.insert({0x1000, 2, 20, 0}));                              // now plain
  Entry got{};
  ASSERT_TRUE(map.find(0x1000, &got));
  EXPECT_EQ(got.id, 2u);
  EXPECT_EQ(got.meta, 0u);
  for (std::size_t i = 0; i < map.rareCapacity(); ++i)
    EXPECT_EQ(map.rareSlots()[i].addr, 0u) << "the replaced rare entry stayed in the side table";
  ASSERT_TRUE(map.insert({0x1000, 3, 30, makeMeta(4, false, 0)}));  // rare again
  ASSERT_TRUE(map.find(0x1000, &got));
  EXPECT_EQ(got.id, 3u);
  EXPECT_EQ(metaReap(got.meta), 4u);
  EXPECT_EQ(map.size(), 1u);
}

TEST(RecordObjectMap, ForEachRenumbersAndRetainRareFilters) {
  ObjectMap map;
  ASSERT_TRUE(map.init(64));
  for (std::uint64_t i = 1; i <= 100; ++i) {
    const std::uint64_t meta = i % 10 == 0 ? makeMeta(kNoObject, false, 4) : 0;
    ASSERT_TRUE(map.insert({i * 0x40, i, i, meta}));
  }
  map.forEach([](Entry& e) { e.id += 1000; });
  for (std::uint64_t i = 1; i <= 100; ++i) {
    Entry got{};
    ASSERT_TRUE(map.find(i * 0x40, &got));
    EXPECT_EQ(got.id, i + 1000);
    EXPECT_EQ(got.size, i);
  }
  map.retainRare([](const Entry& e) { return e.id % 20 == 0; });  // drops ids 1010, 1030, ...
  for (std::uint64_t i = 1; i <= 100; ++i) {
    Entry got{};
    const bool dropped = i % 10 == 0 && (i + 1000) % 20 != 0;
    EXPECT_EQ(map.find(i * 0x40, &got), !dropped) << i;
  }
  EXPECT_EQ(map.size(), 95u);
}

// Random inserts, replacements, takes and erases against a reference, from a small table
// that must grow, with addresses packed close (as an allocator hands them out) and
// scattered (so clusters wrap around the table's end).
TEST(RecordObjectMap, RandomRunMatchesReference) {
  ObjectMap map;
  ASSERT_TRUE(map.init(64));
  std::unordered_map<std::uintptr_t, Entry> ref;
  std::mt19937_64 rng(12345);
  std::uint64_t nextId = 0;
  for (int step = 0; step < 200000; ++step) {
    const std::uintptr_t addr =
        (rng() % 2 == 0) ? 0x10000 + (rng() % 4096) * 16 : (rng() % (1u << 20)) * 16 + 16;
    const unsigned op = rng() % 4;
    if (op <= 1) {
      const bool rare = rng() % 8 == 0;
      const Entry e{addr, nextId++, rng() % 1000, rare ? makeMeta(kNoObject, false, 6) : 0};
      ASSERT_TRUE(map.insert(e));
      ref[addr] = e;
    } else if (op == 2) {
      Entry got{};
      const auto it = ref.find(addr);
      ASSERT_EQ(map.take(addr, &got), it != ref.end()) << step;
      if (it != ref.end()) {
        EXPECT_TRUE(same(got, it->second)) << step;
        ref.erase(it);
      }
    } else {
      map.erase(addr);
      ref.erase(addr);
    }
    if (step % 997 == 0) {
      ASSERT_EQ(map.size(), ref.size()) << step;
      for (const auto& [a, e] : ref) {
        Entry got{};
        ASSERT_TRUE(map.find(a, &got)) << step;
        ASSERT_TRUE(same(got, e)) << step;
      }
    }
  }
}

// Threads under one lock, as in the recorder: each creates objects at its own addresses,
// looks them up, frees some itself and hands the others to the next thread, which frees them
// and creates its own objects at the addresses it was handed (an allocator reusing a block
// another thread freed). Outside the lock every thread prefetches and touches the slot it is
// about to use, as the recorder's call paths do, while the table grows under other threads.
// Ids are handed out under the lock, so each map entry can be checked against the id its
// creator recorded.
TEST(RecordObjectMap, ConcurrentThreadsUnderTheLock) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 30;
  constexpr int kPerRound = 2000;
  ObjectMap map;
  ASSERT_TRUE(map.init(64));  // grows to thousands of slots during the run
  strata::record::RecorderLock lock;
  std::uint64_t nextId = 0;
  // handoff[t]: addresses (with the id their object got) thread t hands to thread t + 1.
  std::vector<std::vector<Entry>> handoff(kThreads);
  std::mutex handoffMutex;
  std::atomic<int> failures{0};

  auto worker = [&](int t) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(t) + 1);
    std::vector<Entry> mine;
    for (int round = 0; round < kRounds; ++round) {
      // Create: fresh addresses of this thread (disjoint ranges), plus the handed-over ones.
      std::vector<std::uintptr_t> addrs;
      for (int i = 0; i < kPerRound; ++i)
        addrs.push_back((static_cast<std::uintptr_t>(t + 1) << 32) +
                        static_cast<std::uintptr_t>(round * kPerRound + i) * 32);
      std::vector<Entry> received;
      {
        std::lock_guard<std::mutex> g(handoffMutex);
        received.swap(handoff[(t + kThreads - 1) % kThreads]);
      }
      for (const Entry& h : received) {
        map.prefetch(h.addr);
        map.touch(h.addr);
        lock.lock();
        Entry got{};
        const bool ok = map.take(h.addr, &got) && same(got, h);  // the free of the old object
        lock.unlock();
        if (!ok) ++failures;
        addrs.push_back(h.addr);  // and a new object of this thread at the same address
      }
      for (std::uintptr_t a : addrs) {
        map.prefetch(a);
        const bool rare = rng() % 16 == 0;
        lock.lock();
        const Entry e{a, nextId++, rng() % 4096, rare ? makeMeta(kNoObject, false, 7) : 0};
        if (!map.insert(e)) ++failures;
        lock.unlock();
        mine.push_back(e);
      }
      // Look every live object up, then free half and hand the rest over.
      std::vector<Entry> keep, give;
      for (const Entry& e : mine) {
        map.touch(e.addr);
        lock.lock();
        Entry got{};
        const bool ok = map.find(e.addr, &got) && same(got, e);
        lock.unlock();
        if (!ok) ++failures;
        (rng() % 2 == 0 ? keep : give).push_back(e);
      }
      for (const Entry& e : keep) {
        lock.lock();
        Entry got{};
        const bool ok = map.take(e.addr, &got) && same(got, e);
        lock.unlock();
        if (!ok) ++failures;
      }
      mine.clear();
      std::lock_guard<std::mutex> g(handoffMutex);
      auto& out = handoff[t];
      out.insert(out.end(), give.begin(), give.end());
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  // What is left is exactly the objects still waiting in the handoff lists.
  std::size_t waiting = 0;
  for (const auto& list : handoff) {
    waiting += list.size();
    for (const Entry& e : list) {
      Entry got{};
      ASSERT_TRUE(map.find(e.addr, &got));
      EXPECT_TRUE(same(got, e));
    }
  }
  EXPECT_EQ(map.size(), waiting);
}

}  // namespace
