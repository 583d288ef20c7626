// The platform layer: the page size the layouts assume against the running system's, page
// rounding, and the memory calls' results (nullptr or false on failure, errno left as the
// system set it, nothing aborts).
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "strata/platform/clock.hpp"
#include "strata/platform/memory.hpp"
#include "strata/platform/page.hpp"

using namespace strata;
using platform::kPageSize;

TEST(Platform, PageSizeIsTheOneTheLayoutsAssume) {
  EXPECT_EQ(platform::pageSize(), static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)));
  EXPECT_TRUE(platform::pageSizeIsAssumed());
}

TEST(Platform, RoundsToPages) {
  static_assert(platform::pageAlignUp(0) == 0);
  static_assert(platform::pageAlignUp(1) == kPageSize);
  static_assert(platform::pageAlignUp(kPageSize) == kPageSize);
  static_assert(platform::pageAlignDown(kPageSize + 1) == kPageSize);
  std::size_t out = 7;
  EXPECT_FALSE(platform::checkedPageAlignUp(SIZE_MAX, out));
  EXPECT_EQ(out, 7u);
  EXPECT_TRUE(platform::checkedPageAlignUp(kPageSize + 1, out));
  EXPECT_EQ(out, 2 * kPageSize);
}

TEST(Platform, MapsZeroedMemoryAndDecommitsItBackToZero) {
  auto* p = static_cast<unsigned char*>(platform::map(4 * kPageSize));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p[0], 0);
  std::memset(p, 0xab, 4 * kPageSize);
  EXPECT_TRUE(platform::decommit(p, 4 * kPageSize, platform::Decommit::Now));
  EXPECT_EQ(p[kPageSize], 0);
  platform::unmap(p, 4 * kPageSize);
}

TEST(Platform, AFailedMapIsNullWithTheSystemsErrno) {
  errno = 0;
  EXPECT_EQ(platform::map(SIZE_MAX & ~(kPageSize - 1)), nullptr);
  EXPECT_EQ(errno, ENOMEM);
}

TEST(Platform, ReservesThenCommits) {
  auto* p = static_cast<unsigned char*>(platform::reserve(16 * kPageSize));
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(platform::commit(p, 2 * kPageSize));
  p[2 * kPageSize - 1] = 1;
  EXPECT_FALSE(platform::commit(p + 1, kPageSize));  // not page-aligned: refused
  platform::unmap(p, 16 * kPageSize);
}

TEST(Platform, RemapsKeepingTheContents) {
  auto* p = static_cast<unsigned char*>(platform::map(kPageSize));
  ASSERT_NE(p, nullptr);
  p[0] = 42;
  auto* q = static_cast<unsigned char*>(platform::remap(p, kPageSize, 64 * kPageSize));
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q[0], 42);
  EXPECT_TRUE(platform::resizeInPlace(q, 64 * kPageSize, kPageSize));  // shrinking always fits
  auto* target = static_cast<unsigned char*>(platform::map(2 * kPageSize));
  ASSERT_NE(target, nullptr);
  auto* moved = static_cast<unsigned char*>(platform::remapTo(q, kPageSize, 2 * kPageSize, target));
  ASSERT_EQ(moved, target);
  EXPECT_EQ(moved[0], 42);
  platform::unmap(moved, 2 * kPageSize);
}

TEST(Platform, TheClockIsMonotonic) {
  const std::uint64_t a = platform::nowMs();
  EXPECT_GE(platform::nowMs(), a);
}
