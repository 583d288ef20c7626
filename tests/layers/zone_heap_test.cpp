#include "strata/special/zone_heap.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "strata/top/malloc_heap.hpp"
#include "strata/top/mmap_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "common/counting_heap.hpp"
#include "common/differential.hpp"

using namespace strata;

using Zone = ZoneHeap<4096, MallocHeap>;
static_assert(ClearableHeap<Zone> && AccountedHeap<Zone> && !SizedHeap<Zone>);
static_assert(Zone::Alignment == 16 && Zone::MaxBumped == 4080);

namespace {
std::byte* at(void* p) { return static_cast<std::byte*>(p); }
}  // namespace

TEST(ZoneHeap, BumpsByRoundedSizes) {
  Zone z;
  void* a = z.malloc(1);
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(detail::is_aligned(a, 16));
  EXPECT_EQ(z.malloc(17), at(a) + 16);
  EXPECT_EQ(z.malloc(32), at(a) + 48);
  void* zero = z.malloc(0);  // takes 16 bytes, so pointers stay distinct
  EXPECT_EQ(zero, at(a) + 80);
  EXPECT_EQ(z.malloc(5), at(a) + 96);
  EXPECT_EQ(z.chunks(), 1u);
}

TEST(ZoneHeap, FirstObjectFollowsTheChunkHeader) {
  ZoneHeap<4096, test::CountingHeap<MallocHeap>> z;
  void* a = z.malloc(100);
  ASSERT_EQ(z.outstanding.size(), 1u);
  EXPECT_EQ(a, at(*z.outstanding.begin()) + 16);
  EXPECT_EQ(z.lastRequest, 4096u);
}

TEST(ZoneHeap, FullChunkStartsANewOne) {
  ZoneHeap<4096, test::CountingHeap<MallocHeap>> z;
  void* a = z.malloc(4000);
  void* b = z.malloc(80);  // 4000 + 80 = 4080 = MaxBumped: exactly fills the chunk
  EXPECT_EQ(b, at(a) + 4000);
  EXPECT_EQ(z.chunks(), 1u);
  void* c = z.malloc(1);  // no room left: a second chunk
  EXPECT_EQ(z.chunks(), 2u);
  EXPECT_EQ(z.mallocs, 2u);
  EXPECT_NE(c, at(b) + 80);
  EXPECT_EQ(z.malloc(1), at(c) + 16);
}

TEST(ZoneHeap, BigRequestGetsItsOwnChunkAndLeavesTheCurrentOne) {
  ZoneHeap<4096, test::CountingHeap<MallocHeap>> z;
  void* a = z.malloc(16);
  void* big = z.malloc(4081);  // needs 4096 > MaxBumped
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(z.lastRequest, 4096u + 16u);
  EXPECT_EQ(z.chunks(), 2u);
  std::memset(big, 0xab, 4081);
  EXPECT_EQ(z.malloc(16), at(a) + 16) << "the current chunk must stay current";
  // A request of exactly MaxBumped is still bumped (from a fresh shared chunk).
  ASSERT_NE(z.malloc(Zone::MaxBumped), nullptr);
  EXPECT_EQ(z.lastRequest, 4096u);
  EXPECT_EQ(z.chunks(), 3u);
  ASSERT_NE(z.malloc(1), nullptr);  // m filled its chunk: one more
  EXPECT_EQ(z.chunks(), 4u);
}

TEST(ZoneHeap, FreeIsANoOp) {
  Zone z;
  void* a = z.malloc(64);
  z.free(a);
  z.free(nullptr);
  EXPECT_EQ(z.malloc(64), at(a) + 64);
}

TEST(ZoneHeap, ClearGivesEveryChunkBack) {
  ZoneHeap<4096, test::CountingHeap<MallocHeap>> z;
  for (int i = 0; i < 100; ++i) ASSERT_NE(z.malloc(1000), nullptr);
  ASSERT_NE(z.malloc(100000), nullptr);
  EXPECT_GT(z.bytesHeld(), 100u * 1000u);
  EXPECT_EQ(z.chunks(), z.live());
  z.clear();
  EXPECT_EQ(z.chunks(), 0u);
  EXPECT_EQ(z.live(), 0u);
  EXPECT_EQ(z.strays, 0u);
  EXPECT_EQ(z.bytesHeld(), 0u);
  // Still usable after clear.
  void* p = z.malloc(10);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(z.chunks(), 1u);
}

TEST(ZoneHeap, ClearResetsAContiguousParent) {
  ZoneHeap<4096, SbrkHeap<(std::size_t{1} << 30)>> z;
  void* first = z.malloc(8);
  for (int i = 0; i < 50; ++i) z.malloc(3000);
  EXPECT_EQ(z.bytesHeld(), 50u * 4096u);
  z.clear();
  EXPECT_EQ(z.bytesHeld(), 0u);
  EXPECT_EQ(z.malloc(8), first) << "the break must start over";
}

TEST(ZoneHeap, DestructorReturnsEverything) {
  const std::size_t before = processAccount().held();
  {
    ZoneHeap<8192, MmapHeap> z;
    for (int i = 0; i < 1000; ++i) z.malloc(i * 7 + 1);
    z.malloc(1 << 20);
    EXPECT_GT(processAccount().held(), before);
  }
  EXPECT_EQ(processAccount().held(), before);
}

TEST(ZoneHeap, HugeRequestsAreNull) {
  ZoneHeap<4096, SbrkHeap<(std::size_t{1} << 30)>> z;
  ZoneHeap<4096, MmapHeap> m;
  for (std::size_t n : {SIZE_MAX, SIZE_MAX - 15, SIZE_MAX - 16, SIZE_MAX - 31,
                        std::size_t{1} << 62, std::size_t{1} << 50, std::size_t{1} << 31}) {
    errno = 0;
    EXPECT_EQ(z.malloc(n), nullptr) << n;
    EXPECT_EQ(errno, ENOMEM) << n;
    if (n >= (std::size_t{1} << 50)) {
      errno = 0;
      EXPECT_EQ(m.malloc(n), nullptr) << n;
      EXPECT_EQ(errno, ENOMEM) << n;
    }
  }
  EXPECT_EQ(z.chunks(), 0u);
  EXPECT_NE(z.malloc(16), nullptr);
}

TEST(ZoneHeap, DifferentialMixedWithClear) {
  const auto stats = test::expectEverythingReturned<ZoneHeap<65536, MallocHeap>>(
      {.seed = 11, .ops = 300'000, .maxLive = 2000, .useClear = true});
  EXPECT_GT(stats.clears, 0u);
}

TEST(ZoneHeap, DifferentialSmallWithClearOverSbrk) {
  const auto stats = test::expectEverythingReturned<ZoneHeap<16384, SbrkHeap<>>>(
      {.seed = 12, .ops = 1'000'000, .maxLive = 8000, .sizes = test::SizeMix::Small,
       .useClear = true});
  EXPECT_GT(stats.clears, 0u);
}

TEST(ZoneHeap, DifferentialLargeOverMmap) {
  test::expectEverythingReturned<ZoneHeap<65536, MmapHeap>>(
      {.seed = 13, .ops = 20'000, .maxLive = 200, .sizes = test::SizeMix::Large, .useClear = true});
}

#ifdef STRATA_ASAN
// Built with AddressSanitizer: the space a zone has not handed out, and everything after
// clear, is poisoned, so touching it is reported.
TEST(ZoneHeapDeathTest, ReadAfterClearIsReported) {
  ZoneHeap<4096, SbrkHeap<(std::size_t{1} << 30)>> z;
  auto* p = static_cast<volatile char*>(z.malloc(64));
  p[0] = 1;
  z.clear();
  EXPECT_DEATH((void)p[0], "use-after-poison");
}

TEST(ZoneHeapDeathTest, ReadAfterClearOverMallocIsReported) {
  Zone z;
  auto* p = static_cast<volatile char*>(z.malloc(64));
  p[0] = 1;
  z.clear();
  EXPECT_DEATH((void)p[0], "AddressSanitizer");
}

TEST(ZoneHeapDeathTest, UnusedChunkSpaceIsPoisoned) {
  Zone z;
  auto* p = static_cast<volatile char*>(z.malloc(20));
  p[19] = 1;
  EXPECT_DEATH((void)p[20], "use-after-poison");
  EXPECT_DEATH((void)p[200], "use-after-poison");
}
#else
TEST(ZoneHeapDeathTest, ReadAfterClearIsReported) {
  GTEST_SKIP() << "needs AddressSanitizer (configure with -DSTRATA_SANITIZE=address)";
}
#endif
