// SegmentCache over AccountedSegments: a cached segment comes back warm (same address, its
// contents kept), the cache holds at most tunables().segmentCache (beyond that a segment goes
// back to Super at once), segments go back once the purge delay has passed, cacheDue says
// when, and what a segment had committed is uncommitted when it goes back.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "strata/strata_heap/accounted_segments.hpp"
#include "strata/strata_heap/segment_cache.hpp"
#include "strata/top/segment_heap.hpp"

using namespace strata;

using Cache = SegmentCache<AccountedSegments<SegmentHeap<>>>;
constexpr std::size_t kSeg = Cache::SegmentSize;
constexpr std::uint64_t kNever = ~std::uint64_t{0};

namespace {
std::unique_ptr<Cache> makeCache(std::uint64_t delayMs, std::size_t limit = 16) {
  StrataTunables t;
  t.purgeDelayMs = delayMs;
  t.segmentCache = limit;
  return std::make_unique<Cache>(t);
}

// A segment from the cache with `bytes` of it counted as committed.
void* take(Cache& c, std::size_t bytes, bool expectWarm = false) {
  bool warm = !expectWarm;
  void* s = c.allocSegment(warm);
  EXPECT_EQ(warm, expectWarm);
  if (!warm) c.commit(bytes);
  return s;
}
}  // namespace

TEST(SegmentCache, ACachedSegmentComesBackWarm) {
  auto c = makeCache(10'000);
  EXPECT_EQ(c->cacheDue(), kNever);
  void* s = take(*c, 8192);
  ASSERT_NE(s, nullptr);
  static_cast<unsigned char*>(s)[3 * 4096] = 0x5A;
  const std::uint64_t before = Cache::nowMs();
  c->cacheSegment(s, 8192);
  EXPECT_EQ(c->cachedSegments(), 1u);
  EXPECT_EQ(c->committed(), 8192u) << "cached segments stay committed";
  EXPECT_GE(c->cacheDue(), before + 10'000);
  EXPECT_LE(c->cacheDue(), Cache::nowMs() + 10'000);
  bool warm = false;
  EXPECT_EQ(c->allocSegment(warm), s);
  EXPECT_TRUE(warm);
  EXPECT_EQ(static_cast<unsigned char*>(s)[3 * 4096], 0x5A) << "its memory was kept";
  EXPECT_EQ(c->cachedSegments(), 0u);
  EXPECT_EQ(c->cacheDue(), kNever);
  void* fresh = c->allocSegment(warm);
  EXPECT_FALSE(warm) << "an empty cache asks Super";
  EXPECT_NE(fresh, s);
  c->freeChunk(fresh);
  c->freeChunk(s);
}

TEST(SegmentCache, NewestFirst) {
  auto c = makeCache(10'000);
  void* a = take(*c, 4096);
  void* b = take(*c, 4096);
  c->cacheSegment(a, 4096);
  c->cacheSegment(b, 4096);
  bool warm = false;
  EXPECT_EQ(c->allocSegment(warm), b);
  EXPECT_EQ(c->allocSegment(warm), a);
  EXPECT_TRUE(warm);
  c->freeChunk(a);
  c->freeChunk(b);
}

// A full cache is emptied at once (a hard cap) before the next segment is cached.
TEST(SegmentCache, AFullCacheIsEmptiedAtOnce) {
  auto c = makeCache(10'000, 2);
  void* s[3];
  for (void*& p : s) p = take(*c, 4096);
  for (void* p : s) c->cacheSegment(p, 4096);
  EXPECT_EQ(c->cachedSegments(), 1u) << "the first two went back when the third came";
  EXPECT_EQ(c->committed(), 4096u) << "theirs was uncommitted";
  bool warm = false;
  EXPECT_EQ(c->allocSegment(warm), s[2]);
  EXPECT_TRUE(warm);
  EXPECT_EQ(c->trimChunks(), 2 * kSeg) << "the two were handed to Super, which caches them";
  c->freeChunk(s[2]);
}

// More committed bytes than tunables().maxDelayedBytes empties the cache too.
TEST(SegmentCache, MoreThanTheCapEmptiesTheCache) {
  StrataTunables t;
  t.purgeDelayMs = 10'000;
  t.segmentCache = 16;
  t.maxDelayedBytes = 3 * 4096;
  auto c = std::make_unique<Cache>(t);
  void* s[4];
  for (void*& p : s) p = take(*c, 4096);
  for (void* p : s) c->cacheSegment(p, 4096);
  EXPECT_EQ(c->cachedSegments(), 1u);
  EXPECT_EQ(c->committed(), 4096u);
  c->purgeCache(0, true);
  EXPECT_EQ(c->committed(), 0u);
}

TEST(SegmentCache, ALimitOfZeroCachesNothing) {
  auto c = makeCache(10'000, 0);
  void* s = take(*c, 4096);
  c->cacheSegment(s, 4096);
  EXPECT_EQ(c->cachedSegments(), 0u);
  EXPECT_EQ(c->committed(), 0u);
  EXPECT_EQ(c->cacheDue(), kNever);
}

TEST(SegmentCache, PurgedOnlyOnceDue) {
  auto c = makeCache(10'000);
  void* a = take(*c, 4096);
  void* b = take(*c, 8192);
  c->cacheSegment(a, 4096);
  c->cacheSegment(b, 8192);
  const std::uint64_t due = c->cacheDue();
  c->purgeCache(due - 1);
  EXPECT_EQ(c->cachedSegments(), 2u);
  EXPECT_EQ(c->committed(), 4096u + 8192u);
  c->purgeCache(due + 10'000);
  EXPECT_EQ(c->cachedSegments(), 0u);
  EXPECT_EQ(c->committed(), 0u) << "what each had committed was uncommitted";
  EXPECT_EQ(c->cacheDue(), kNever);
}

TEST(SegmentCache, OlderSegmentsGoFirst) {
  auto c = makeCache(40);
  void* a = take(*c, 4096);
  void* b = take(*c, 8192);
  c->cacheSegment(a, 4096);
  const std::uint64_t dueA = c->cacheDue();
  std::this_thread::sleep_for(std::chrono::milliseconds(25));
  c->cacheSegment(b, 8192);
  EXPECT_EQ(c->cacheDue(), dueA) << "the oldest decides";
  const std::uint64_t now = Cache::nowMs();
  if (now + 40 <= dueA + 5) GTEST_SKIP() << "the coarse clock did not move";
  c->purgeCache(dueA);
  EXPECT_EQ(c->cachedSegments(), 1u);
  EXPECT_EQ(c->committed(), 8192u);
  EXPECT_GT(c->cacheDue(), dueA);
  bool warm = false;
  EXPECT_EQ(c->allocSegment(warm), b);
  c->freeChunk(b);
}

TEST(SegmentCache, WithASmallDelayTheClockPurges) {
  auto c = makeCache(20);
  void* s = take(*c, 4096);
  c->cacheSegment(s, 4096);
  EXPECT_EQ(c->cachedSegments(), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  c->purgeCache(Cache::nowMs());
  EXPECT_EQ(c->cachedSegments(), 0u);
  EXPECT_EQ(c->committed(), 0u);
}

TEST(SegmentCache, ADelayOfZeroGivesBackAtOnce) {
  auto c = makeCache(0);
  void* s = take(*c, 4096);
  c->cacheSegment(s, 4096);
  EXPECT_EQ(c->cachedSegments(), 0u);
  EXPECT_EQ(c->committed(), 0u);
}

TEST(SegmentCache, SharedByThreads) {
  auto c = makeCache(10'000);
  std::vector<void*> given(4);
  for (void*& s : given) s = take(*c, 4096);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([&, i] { c->cacheSegment(given[i], 4096); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(c->cachedSegments(), 4u);
  std::thread([&] {
    for (int i = 0; i < 4; ++i) {
      bool warm = false;
      void* s = c->allocSegment(warm);
      EXPECT_TRUE(warm);
      EXPECT_NE(std::find(given.begin(), given.end(), s), given.end());
    }
  }).join();
  for (void* s : given) c->freeChunk(s);
}
