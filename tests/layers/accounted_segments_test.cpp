// AccountedSegments over SegmentHeap: the books (committed bytes and their peak, bytes in
// use), decommit(Now) making memory read as zero and lowering what is committed, aligned
// segments and chunks found from interior addresses, trimChunks, records and the clock.
#include <gtest/gtest.h>
#include <time.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>

#include "strata/detail/align.hpp"
#include "strata/strata_heap/accounted_segments.hpp"
#include "strata/top/segment_heap.hpp"

using namespace strata;

using Accounted = AccountedSegments<SegmentHeap<>>;
constexpr std::size_t kSeg = Accounted::SegmentSize;

namespace {
// A clock's reading in whole milliseconds.
std::uint64_t msOf(clockid_t clock) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000 +
         static_cast<std::uint64_t>(ts.tv_nsec) / 1'000'000;
}
}  // namespace

TEST(AccountedSegments, CarriesTheTunables) {
  StrataTunables t;
  t.purgeDelayMs = 7;
  t.segmentCache = 3;
  auto a = std::make_unique<Accounted>(t);
  EXPECT_EQ(a->tunables().purgeDelayMs, 7u);
  EXPECT_EQ(a->tunables().segmentCache, 3u);
  EXPECT_EQ(Accounted::ChunkHeaderBytes, SegmentHeap<>::HeaderBytes);
}

TEST(AccountedSegments, CommittedBytesAndTheirPeak) {
  auto a = std::make_unique<Accounted>();
  EXPECT_EQ(a->committed(), 0u);
  a->commit(100);
  a->commit(50);
  EXPECT_EQ(a->committed(), 150u);
  a->uncommit(120);
  EXPECT_EQ(a->committed(), 30u);
  a->commit(10);
  const StrataHeapStats s = a->stats();
  EXPECT_EQ(s.bytesFromSystem, 40u);
  EXPECT_EQ(s.peakBytesFromSystem, 150u) << "the peak stays at the high-water mark";
  a->commit(200);
  EXPECT_EQ(a->stats().peakBytesFromSystem, 240u);
}

TEST(AccountedSegments, BytesInUse) {
  auto a = std::make_unique<Accounted>();
  a->addInUse(64);
  a->addInUse(32);
  a->subInUse(64);
  EXPECT_EQ(a->stats().bytesInUse, 32u);
  EXPECT_EQ(a->committed(), 0u) << "in use and committed are separate books";
}

TEST(AccountedSegments, SegmentsAreAlignedAndFoundFromInside) {
  auto a = std::make_unique<Accounted>();
  void* s = a->allocSegment();
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(detail::is_aligned(s, kSeg));
  EXPECT_EQ(Accounted::chunkSize(s), kSeg);
  auto* b = static_cast<std::byte*>(s);
  EXPECT_EQ(a->chunkOf(b + 4096), s);
  EXPECT_EQ(a->chunkOf(b + kSeg - 1), s);
  EXPECT_NE(a->chunkOf(b + kSeg), s);
  int local = 0;
  EXPECT_EQ(a->chunkOf(&local), nullptr);
  EXPECT_EQ(a->committed(), 0u) << "the layers above commit what they use";

  void* big = a->allocChunk(3 * kSeg + 5, kSeg, 0);
  ASSERT_NE(big, nullptr);
  EXPECT_TRUE(detail::is_aligned(big, kSeg));
  EXPECT_GE(Accounted::chunkSize(big), 3 * kSeg + 5);
  EXPECT_EQ(a->chunkOf(static_cast<std::byte*>(big) + 3 * kSeg), big);
  a->freeChunk(big);
  EXPECT_EQ(a->chunkOf(static_cast<std::byte*>(big) + 3 * kSeg), nullptr) << "unmapped";

  void* shifted = a->allocChunk(kSeg + 4096, 4 * kSeg, kSeg);
  ASSERT_NE(shifted, nullptr);
  EXPECT_TRUE(detail::is_aligned(static_cast<std::byte*>(shifted) + kSeg, 4 * kSeg));
  a->freeChunk(shifted);
  a->freeChunk(s);
}

TEST(AccountedSegments, DecommitNowReadsZeroAndLowersCommitted) {
  auto a = std::make_unique<Accounted>();
  void* s = a->allocSegment();
  ASSERT_NE(s, nullptr);
  auto* b = static_cast<unsigned char*>(s);
  constexpr std::size_t kFrom = 64 << 10, kLen = 128 << 10;
  a->commit(kSeg);
  std::memset(b + kFrom, 0xAB, kLen);
  a->decommit(b + kFrom, kLen, platform::Decommit::Now);
  EXPECT_EQ(a->committed(), kSeg - kLen);
  for (std::size_t i = 0; i < kLen; i += 512) ASSERT_EQ(b[kFrom + i], 0) << i;
  EXPECT_EQ(b[kFrom + kLen - 1], 0);
  b[kFrom + kLen] = 7;  // the byte after the range is untouched
  a->decommit(b + kFrom + kLen, 64 << 10, platform::Decommit::Lazy);
  EXPECT_EQ(a->committed(), kSeg - kLen - (64 << 10)) << "lazy decommits count as well";
  std::memset(b + kFrom, 1, kLen);  // decommitted memory is still usable
  a->freeChunk(s);
}

TEST(AccountedSegments, TrimChunksUnmapsSuperCachedSegments) {
  auto a = std::make_unique<Accounted>();
  void* s1 = a->allocSegment();
  void* s2 = a->allocSegment();
  ASSERT_TRUE(s1 && s2);
  a->freeChunk(s1);
  a->freeChunk(s2);
  EXPECT_EQ(a->trimChunks(), 2 * kSeg);
  EXPECT_EQ(a->trimChunks(), 0u);
}

TEST(AccountedSegments, RecordsAndClock) {
  void* r = Accounted::mapRecord(3 * 4096);
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(detail::is_aligned(r, 4096));
  auto* b = static_cast<unsigned char*>(r);
  EXPECT_EQ(b[0] | b[3 * 4096 - 1], 0);
  b[100] = 1;
  Accounted::unmapRecord(r, 3 * 4096);
  // nowMs is the monotonic clock in milliseconds, read coarsely: each reading lies between
  // the coarse monotonic clock read just before it and the precise one read just after it
  // (the coarse clock never runs ahead of the precise one). Bracketed so, the check does not
  // depend on how long anything takes, and fails for another clock, another unit, or (on the
  // second reading, taken once the coarse clock has moved past the first) a clock that
  // stands still.
  std::uint64_t first = 0;
  for (int reading = 0; reading < 2; ++reading) {
    if (reading > 0) {
      for (int waited = 0; msOf(CLOCK_MONOTONIC_COARSE) <= first && waited < 10'000; ++waited)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      ASSERT_GT(msOf(CLOCK_MONOTONIC_COARSE), first) << "the coarse clock did not move in 10 s";
    }
    const std::uint64_t before = msOf(CLOCK_MONOTONIC_COARSE);
    const std::uint64_t ms = Accounted::nowMs();
    const std::uint64_t after = msOf(CLOCK_MONOTONIC);
    EXPECT_GE(ms, before) << "reading " << reading;
    EXPECT_LE(ms, after) << "reading " << reading;
    if (reading == 0) first = ms;
  }
}
