// Top heaps: memory from the system, and the accounting of it.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>

#include "strata/concepts.hpp"
#include "strata/platform/page.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/mmap_heap.hpp"
#include "strata/top/null_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/top/static_buffer_heap.hpp"
#include "common/differential.hpp"

using namespace strata;

static_assert(SizedHeap<MallocHeap> && AccountedHeap<MallocHeap>);
static_assert(SizedHeap<MmapHeap> && AccountedHeap<MmapHeap>);
static_assert(ClearableHeap<SbrkHeap<>> && AccountedHeap<SbrkHeap<>>);
static_assert(ClearableHeap<StaticBufferHeap<4096>>);
static_assert(Heap<NullHeap<>>);
static_assert(ResizableMappings<MmapHeap> && !ResizesInPlace<MmapHeap>);

TEST(MallocHeap, AccountsUsableSizeAndPeak) {
  MallocHeap h;
  const std::size_t process0 = processAccount().held();
  void* a = h.malloc(1000);
  void* b = h.malloc(50);
  ASSERT_TRUE(a && b);
  EXPECT_GE(h.getSize(a), 1000u);
  EXPECT_EQ(h.bytesHeld(), h.getSize(a) + h.getSize(b));
  EXPECT_EQ(processAccount().held(), process0 + h.bytesHeld());
  const std::size_t both = h.bytesHeld();
  h.free(a);
  EXPECT_EQ(h.bytesHeld(), h.getSize(b));
  EXPECT_EQ(h.peakBytesHeld(), both);
  h.free(b);
  h.free(nullptr);
  EXPECT_EQ(h.bytesHeld(), 0u);
  EXPECT_EQ(processAccount().held(), process0);
}

TEST(MallocHeap, HugeRequestIsNullWithEnomem) {
  MallocHeap h;
  errno = 0;
  EXPECT_EQ(h.malloc(SIZE_MAX - 8), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_EQ(h.bytesHeld(), 0u);
}

TEST(MmapHeap, OneMappingPerObjectReturnedOnFree) {
  MmapHeap h;
  void* p = h.malloc(10000);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(detail::is_aligned(p, 16));
  EXPECT_TRUE(MmapHeap::isMapped(p));
  EXPECT_EQ(h.getSize(p), 12288u - 16);  // three pages less the header
  EXPECT_EQ(h.bytesHeld(), 12288u);
  std::memset(p, 0xab, h.getSize(p));
  h.free(p);
  EXPECT_EQ(h.bytesHeld(), 0u);
  EXPECT_EQ(h.peakBytesHeld(), 12288u);
}

TEST(MmapHeap, HugeRequestsFailCleanly) {
  MmapHeap h;
  for (std::size_t n : {SIZE_MAX, SIZE_MAX - 15, SIZE_MAX - 4096, std::size_t{1} << 62}) {
    errno = 0;
    EXPECT_EQ(h.malloc(n), nullptr) << n;
    EXPECT_EQ(errno, ENOMEM);
  }
  EXPECT_EQ(h.bytesHeld(), 0u);
}

// Shrinking unmaps the tail (the pages past the new end are gone, and so is their memory);
// growing extends the mapping only where the pages after it are free.
TEST(MmapHeap, ResizeMappingShrinksByUnmappingTheTailAndGrowsOnlyWhereThereIsRoom) {
  MmapHeap h;
  const std::size_t page = platform::pageSize();
  auto* p = static_cast<unsigned char*>(h.malloc(64 * page));
  ASSERT_NE(p, nullptr);
  std::memset(p, 0x5a, h.getSize(p));
  const std::size_t process0 = processAccount().held();
  EXPECT_EQ(h.resizeMapping(p, 3 * page), p);
  EXPECT_EQ(h.getSize(p), 4 * page - MmapHeap::HeaderSize);
  EXPECT_EQ(h.bytesHeld(), 4 * page);
  EXPECT_EQ(processAccount().held(), process0 - 61 * page);  // 65 pages were mapped
  for (std::size_t i = 0; i < h.getSize(p); ++i) ASSERT_EQ(p[i], 0x5a) << i;
  unsigned char resident = 0;
  errno = 0;
  EXPECT_EQ(::mincore(p - MmapHeap::HeaderSize + 4 * page, page, &resident), -1);
  EXPECT_EQ(errno, ENOMEM) << "the page past the new end is still mapped";
  EXPECT_EQ(h.resizeMapping(p, h.getSize(p)), p);  // same pages: nothing to do
  EXPECT_EQ(h.bytesHeld(), 4 * page);

  // Growing into pages that are mapped already fails and leaves p alone.
  void* fence = ::mmap(p - MmapHeap::HeaderSize + 4 * page, page, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  ASSERT_NE(fence, MAP_FAILED);
  errno = 12345;
  EXPECT_EQ(h.resizeMapping(p, 4 * page), nullptr);
  EXPECT_EQ(errno, 12345);
  EXPECT_EQ(h.getSize(p), 4 * page - MmapHeap::HeaderSize);
  ::munmap(fence, page);
  // With the pages after it free, it grows there.
  ASSERT_EQ(h.resizeMapping(p, 6 * page), p);
  EXPECT_EQ(h.getSize(p), 7 * page - MmapHeap::HeaderSize);
  EXPECT_EQ(h.bytesHeld(), 7 * page);
  for (std::size_t i = 0; i < 4 * page - MmapHeap::HeaderSize; ++i) ASSERT_EQ(p[i], 0x5a) << i;
  for (std::size_t i = 4 * page - MmapHeap::HeaderSize; i < h.getSize(p); ++i)
    ASSERT_EQ(p[i], 0) << i;
  for (std::size_t n : {SIZE_MAX, SIZE_MAX - 15, std::size_t{PTRDIFF_MAX}})
    EXPECT_EQ(h.resizeMapping(p, n), nullptr) << n;
  EXPECT_EQ(h.getSize(p), 7 * page - MmapHeap::HeaderSize);
  h.free(p);
  EXPECT_EQ(h.bytesHeld(), 0u);
}

TEST(SbrkHeap, GrowsContiguouslyAndClears) {
  SbrkHeap<(64u << 20)> h;
  auto* a = static_cast<std::byte*>(h.malloc(24));
  auto* b = static_cast<std::byte*>(h.malloc(100));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(b, a + 32);  // rounded to 16 and adjacent
  EXPECT_EQ(h.top(), b + 112);
  EXPECT_EQ(h.bytesHeld(), 144u);
  std::memset(b, 1, 100);
  h.clear();
  EXPECT_EQ(h.bytesHeld(), 0u);
  EXPECT_EQ(h.peakBytesHeld(), 144u);
  EXPECT_EQ(h.malloc(16), a);  // starts over at the base
}

TEST(SbrkHeap, ReservationExhaustionIsEnomem) {
  SbrkHeap<(4u << 20), (1u << 20)> h;
  void* a = h.malloc(3u << 20);
  ASSERT_NE(a, nullptr);
  std::memset(a, 7, 3u << 20);  // committed memory is really usable
  errno = 0;
  EXPECT_EQ(h.malloc(2u << 20), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_NE(h.malloc(1u << 20), nullptr);  // what is left is still handed out
  EXPECT_EQ(h.malloc(SIZE_MAX), nullptr);
  EXPECT_EQ(h.malloc(SIZE_MAX - 8), nullptr);
}

// Under an address-space limit (RLIMIT_AS, `ulimit -v`) smaller than the reservation, the
// heap reserves what fits instead of refusing every request: libstrata-kingsley.so and
// libstrata-lea.so (64 GiB reservations) failed every small malloc under `ulimit -v 2G`.
// In a child process, so the limit stays there.
TEST(SbrkHeap, ReservesLessUnderAnAddressSpaceLimit) {
  auto limitedRun = [] {
    long pages = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
      std::fclose(f);
    }
    rlimit lim{};
    getrlimit(RLIMIT_AS, &lim);
    lim.rlim_cur = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) +
                   (rlim_t{256} << 20);
    if (pages == 0 || setrlimit(RLIMIT_AS, &lim) != 0) std::_Exit(2);
    SbrkHeap<(std::size_t{64} << 30)> h;
    void* p = h.malloc(1000);
    if (p == nullptr) std::_Exit(3);
    std::memset(p, 1, 1000);
    std::size_t got = 1000;
    errno = 0;
    while (h.malloc(1 << 20) != nullptr) got += 1 << 20;
    // Tens of MiB under the limit, then ENOMEM, not a crash.
    std::_Exit(got >= (std::size_t{32} << 20) && errno == ENOMEM ? 0 : 4);
  };
  EXPECT_EXIT(limitedRun(), ::testing::ExitedWithCode(0), "");
}

TEST(SbrkHeap, DestructorReturnsEverything) {
  const std::size_t before = processAccount().held();
  {
    SbrkHeap<> h;
    ASSERT_NE(h.malloc(1 << 20), nullptr);
    EXPECT_EQ(processAccount().held(), before + (1u << 20));
  }
  EXPECT_EQ(processAccount().held(), before);
}

TEST(StaticBufferHeap, BumpsUntilFullThenNull) {
  StaticBufferHeap<256> h;
  EXPECT_EQ(h.capacity(), 256u);
  void* a = h.malloc(100);
  void* b = h.malloc(100);
  ASSERT_TRUE(a && b);
  EXPECT_TRUE(detail::is_aligned(a, 16) && detail::is_aligned(b, 16));
  errno = 0;
  EXPECT_EQ(h.malloc(100), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_EQ(h.malloc(SIZE_MAX), nullptr);
  EXPECT_EQ(h.bytesHeld(), 224u);
  h.clear();
  EXPECT_EQ(h.bytesHeld(), 0u);
  EXPECT_EQ(h.malloc(200), a);
}

TEST(NullHeap, HasNothing) {
  NullHeap<> h;
  EXPECT_EQ(h.malloc(1), nullptr);
  h.free(nullptr);
}

TEST(MallocHeap, Differential) {
  test::expectEverythingReturned<MallocHeap>({.seed = 11, .ops = 200'000});
}
