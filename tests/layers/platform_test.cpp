// The platform layer: the page size the layouts assume against the running system's, page
// rounding, the memory calls' results (nullptr or false on failure, errno left as the
// system set it, nothing aborts), residency, randomness, the clocks, writing to a
// descriptor, the environment, the process id and yielding.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "strata/platform/clock.hpp"
#include "strata/platform/memory.hpp"
#include "strata/platform/output.hpp"
#include "strata/platform/page.hpp"
#include "strata/platform/process.hpp"
#include "strata/platform/random.hpp"
#include "strata/platform/thread.hpp"

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

TEST(Platform, TheSubsecondClockStaysWithinASecond) {
  EXPECT_LT(platform::nowSubsecondNs(), 1'000'000'000u);
}

TEST(Platform, PagesWrittenAreResidentAndDecommittedOnesAreNot) {
  auto* p = static_cast<unsigned char*>(platform::map(4 * kPageSize));
  ASSERT_NE(p, nullptr);
  p[kPageSize] = 1;
  unsigned char resident[4] = {9, 9, 9, 9};
  ASSERT_TRUE(platform::residentPages(p, 4 * kPageSize, resident));
  EXPECT_EQ(resident[1] & 1, 1);
  EXPECT_TRUE(platform::decommit(p, 4 * kPageSize, platform::Decommit::Now));
  ASSERT_TRUE(platform::residentPages(p, 4 * kPageSize, resident));
  for (unsigned char r : resident) EXPECT_EQ(r & 1, 0);
  EXPECT_FALSE(platform::residentPages(p + 1, kPageSize, resident));  // not page-aligned
  platform::unmap(p, 4 * kPageSize);
}

TEST(Platform, RandomBytesDifferFromCallToCall) {
  std::uint64_t a = 0, b = 0;
  ASSERT_TRUE(platform::randomBytes(&a, sizeof a));
  ASSERT_TRUE(platform::randomBytes(&b, sizeof b));
  EXPECT_NE(a, b);
  const unsigned char* exec = platform::execRandomBytes();
  ASSERT_NE(exec, nullptr);
  EXPECT_EQ(exec, platform::execRandomBytes()) << "the same 16 bytes for every caller";
}

TEST(Platform, WritesEveryByteAndReportsAnError) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  static const char text[] = "strata\n";
  EXPECT_TRUE(platform::writeAll(fds[1], text, sizeof text - 1));
  char back[sizeof text] = {};
  EXPECT_EQ(::read(fds[0], back, sizeof back), static_cast<ssize_t>(sizeof text - 1));
  EXPECT_STREQ(back, text);
  ::close(fds[0]);
  ::close(fds[1]);
  EXPECT_FALSE(platform::writeAll(fds[1], text, sizeof text - 1));  // closed
  EXPECT_TRUE(platform::writeAll(fds[1], text, 0));  // nothing to write: no call
}

TEST(Platform, ReadsTheEnvironmentInPlace) {
  ASSERT_EQ(::setenv("STRATA_PLATFORM_TEST", "42", 1), 0);
  EXPECT_EQ(platform::environmentValue("STRATA_PLATFORM_TEST"), std::getenv("STRATA_PLATFORM_TEST"));
  EXPECT_STREQ(platform::environmentValue("STRATA_PLATFORM_TEST"), "42");
  ASSERT_EQ(::unsetenv("STRATA_PLATFORM_TEST"), 0);
  EXPECT_EQ(platform::environmentValue("STRATA_PLATFORM_TEST"), nullptr);
}

TEST(Platform, KnowsItsProcessAndYields) {
  EXPECT_EQ(platform::processId(), ::getpid());
  platform::yieldThread();
}
