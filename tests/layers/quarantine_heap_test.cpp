// QuarantineHeap: the differential harness (objects come back from the quarantine intact to
// the parent); a freed object is not reused while it waits, reads as zero, and a write into
// it stops the process when it leaves (by budget, trim or checkAll), big objects included;
// the budget holds, trim empties it, and threads freeing at once lose nothing.
#include "strata/hardening/quarantine_heap.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "strata/general/strata_heap.hpp"
#include "common/differential.hpp"

using namespace strata;

using Quarantined = QuarantineHeap<StrataHeap>;
static_assert(SizedHeap<Quarantined> && Quarantined::Alignment == 16);

namespace {
std::unique_ptr<Quarantined> quarantine(std::size_t bytes, std::size_t maxObject = 16 << 10) {
  return std::make_unique<Quarantined>(QuarantineOptions{.bytes = bytes, .maxObject = maxObject});
}
}  // namespace

TEST(QuarantineHeap, Differential) {
  test::expectEverythingReturned<Quarantined>({.seed = 51, .ops = 400'000});
}

TEST(QuarantineHeap, AFreedObjectWaitsZeroed) {
  auto h = quarantine(1 << 20);
  auto* p = static_cast<unsigned char*>(h->malloc(64));
  std::memset(p, 0xab, 64);
  h->free(p);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(p[i], 0) << i;  // still mapped: it waits
  EXPECT_EQ(h->quarantinedBytes(), h->getSize(p));
  // Without the quarantine StrataHeap hands the same block straight back (LIFO); with it,
  // none of the next hundred objects of that size is that block.
  std::set<void*> seen;
  for (int i = 0; i < 100; ++i) seen.insert(h->malloc(64));
  EXPECT_EQ(seen.count(p), 0u);
  for (void* q : seen) h->free(q);
}

TEST(QuarantineHeap, OffReusesAtOnce) {
  auto h = quarantine(0);
  void* p = h->malloc(64);
  h->free(p);
  EXPECT_EQ(h->quarantinedBytes(), 0u);
  EXPECT_EQ(h->malloc(64), p);
}

TEST(QuarantineHeap, TheBudgetHoldsAndTrimEmptiesIt) {
  const std::size_t budget = 64 << 10;
  auto h = quarantine(budget);
  for (int i = 0; i < 20'000; ++i) h->free(h->malloc(100 + i % 900));
  // Each shard may pass its share by the one object that pushed it over.
  EXPECT_LE(h->quarantinedBytes(), budget + Quarantined::kShards * 1024);
  EXPECT_GT(h->quarantinedBytes(), budget / Quarantined::kShards / 2);
  h->trim(0);
  EXPECT_EQ(h->quarantinedBytes(), 0u);
}

TEST(QuarantineHeap, ObjectsAboveTheLimitGoBackAtOnce) {
  auto h = quarantine(1 << 20, 4096);
  void* p = h->malloc(10'000);
  h->free(p);
  EXPECT_EQ(h->quarantinedBytes(), 0u);
}

// A big object is not written: its pages go back to the system and read as zero.
TEST(QuarantineHeap, ABigObjectWaitsDecommitted) {
  auto h = quarantine(1 << 20, 8 << 20);
  const std::size_t n = 4 << 20;
  auto* p = static_cast<unsigned char*>(h->malloc(n));
  std::memset(p, 0x77, n);
  h->free(p);
  for (std::size_t i = 0; i < n; i += 4093) ASSERT_EQ(p[i], 0) << i;
  EXPECT_LT(h->quarantinedBytes(), std::size_t{8} << 10) << "only its edges count";
  h->checkAll();  // read back in, but still zero: nothing to report
}

// A thread that freed and went quiet leaves objects in its shard; the other threads' frees
// empty that shard (it has seen no free since their last look), so the quiet thread's
// objects do not stay allocated in its heap for as long as it stays quiet.
TEST(QuarantineHeap, AQuietThreadsShardIsEmptiedByTheOthers) {
  auto h = quarantine(Quarantined::kShards * 64 << 10);
  std::thread quiet([&h] {
    for (int i = 0; i < 200; ++i) h->free(h->malloc(256));
  });
  quiet.join();
  const std::size_t left = h->quarantinedBytes();
  ASSERT_GT(left, 200u * 200) << "the quiet thread's objects wait";
  std::thread busy([&h] {
    for (int i = 0; i < 50'000; ++i) h->free(h->malloc(32));
  });
  busy.join();
  // What waits now is the busy thread's own objects alone (32-byte ones).
  EXPECT_LT(h->quarantinedBytes(), Quarantined::kSlots * 64u);
}

TEST(QuarantineHeap, ThreadsFreeingAtOnceLoseNothing) {
  auto h = quarantine(256 << 10);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&h, t] {
      std::vector<unsigned char*> live;
      for (int i = 0; i < 50'000; ++i) {
        const std::size_t n = 16 + static_cast<std::size_t>((i * 7 + t) % 2000);
        auto* p = static_cast<unsigned char*>(h->malloc(n));
        p[0] = static_cast<unsigned char>(t);
        p[n - 1] = static_cast<unsigned char>(i);
        live.push_back(p);
        if (live.size() > 64) {
          h->free(live.front());
          live.erase(live.begin());
        }
      }
      for (unsigned char* p : live) h->free(p);
    });
  for (std::thread& t : threads) t.join();
  h->checkAll();
  h->trim(0);
  EXPECT_EQ(h->quarantinedBytes(), 0u);
}

using QuarantineHeapDeathTest = ::testing::Test;

TEST_F(QuarantineHeapDeathTest, AWriteAfterFreeIsReportedWhenTheObjectLeaves) {
  auto h = quarantine(4096);
  auto* p = static_cast<char*>(h->malloc(200));
  h->free(p);
  p[150] = 'A';
  char at[64];
  std::snprintf(at, sizeof at, "strata: write after free at %p\n", static_cast<void*>(p + 150));
  EXPECT_DEATH(
      {
        for (int i = 0; i < 100; ++i) h->free(h->malloc(200));  // pushes p out
      },
      at);
  p[150] = 0;  // the parent's test goes on: undo the damage
}

TEST_F(QuarantineHeapDeathTest, CheckAllFindsAWriteToAWaitingObject) {
  EXPECT_DEATH(
      {
        auto h = quarantine(1 << 20);
        auto* p = static_cast<char*>(h->malloc(40));
        h->free(p);
        p[3] = 1;
        h->checkAll();
      },
      "strata: write after free at 0x");
}

TEST_F(QuarantineHeapDeathTest, AWriteIntoABigDecommittedObjectIsFound) {
  EXPECT_DEATH(
      {
        auto h = quarantine(1 << 20, 8 << 20);
        auto* p = static_cast<char*>(h->malloc(1 << 20));
        h->free(p);
        p[300'000] = 'A';  // a page in the middle, resident again
        h->checkAll();
      },
      "strata: write after free at 0x");
}

// The first KeepBytes of each object are left alone (a header layer above keeps its state
// there): neither zeroed nor checked.
TEST(QuarantineHeap, KeepBytesAreLeftAlone) {
  auto h = std::make_unique<QuarantineHeap<StrataHeap, 16>>(QuarantineOptions{});
  auto* p = static_cast<unsigned char*>(h->malloc(64));
  std::memset(p, 0xcd, 64);
  h->free(p);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(p[i], 0xcd) << i;
  for (int i = 16; i < 64; ++i) EXPECT_EQ(p[i], 0) << i;
  p[5] = 1;
  h->checkAll();
}
