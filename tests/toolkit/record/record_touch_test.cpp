// The recorder's page logic (toolkit/record/recorder/touch.cpp) on its own: which whole pages lie inside an
// object, giving them back, and counting what was touched since, on anonymous memory mapped
// here (the recorder's objects are glibc's private anonymous memory too).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "record/recorder/touch.hpp"

namespace {

using strata::record::interiorPages;
using strata::record::kTouchUnknown;
using strata::record::releasePages;
using strata::record::touchedBytes;

const std::size_t kPage = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));

// An anonymous private mapping of `pages` pages, every byte written (all resident), unmapped
// at the end. Huge pages are off for the process so residency is counted page by page.
class Mapping {
 public:
  explicit Mapping(std::size_t pages) : bytes_(pages * kPage) {
    ::prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    base_ = p == MAP_FAILED ? nullptr : static_cast<unsigned char*>(p);
    if (base_ != nullptr) std::memset(base_, 0xab, bytes_);
  }
  ~Mapping() {
    if (base_ != nullptr) ::munmap(base_, bytes_);
  }
  unsigned char* base() const { return base_; }

 private:
  std::size_t bytes_;
  unsigned char* base_;
};

TEST(TouchPages, InteriorPagesAreTheWholePagesStrictlyInside) {
  std::uintptr_t f = 0, l = 0;
  const std::uintptr_t b = 100 * kPage;
  ASSERT_TRUE(interiorPages(b + 16, b + 3 * kPage + 5, kPage, &f, &l));
  EXPECT_EQ(f, b + kPage);
  EXPECT_EQ(l, b + 3 * kPage);
  ASSERT_TRUE(interiorPages(b, b + 2 * kPage, kPage, &f, &l));  // page-aligned: both inside
  EXPECT_EQ(f, b);
  EXPECT_EQ(l, b + 2 * kPage);
  EXPECT_FALSE(interiorPages(b + 16, b + 2 * kPage - 16, kPage, &f, &l));  // straddles one boundary
  EXPECT_FALSE(interiorPages(b + 5, b + 5, kPage, &f, &l));
  EXPECT_FALSE(interiorPages(b + 5 * kPage, b, kPage, &f, &l));
}

TEST(TouchPages, ReleasedPagesReadZeroAndOnlyTouchedOnesCount) {
  Mapping m(64);
  ASSERT_NE(m.base(), nullptr);
  // An "object" from 16 bytes into the first page to 16 bytes before the end: 62 whole pages.
  unsigned char* obj = m.base() + 16;
  const std::uint64_t size = 64 * kPage - 32;
  EXPECT_EQ(touchedBytes(obj, size, kPage), size);  // everything written
  ASSERT_TRUE(releasePages(obj, 0, size, kPage));
  // Only the partial first page: the partial last one counts only when the last whole page
  // was touched too.
  EXPECT_EQ(touchedBytes(obj, size, kPage), size - 62 * kPage - (kPage - 16));
  EXPECT_EQ(obj[kPage], 0) << "a released page must read back as zero";
  EXPECT_EQ(obj[-1], 0xab) << "the partial first page is kept";
  EXPECT_EQ(obj[size], 0xab) << "the partial last page is kept";
  // The read above made one page resident (the zero page); write into two more.
  obj[10 * kPage] = 1;
  obj[20 * kPage + 7] = 1;
  EXPECT_EQ(touchedBytes(obj, size, kPage), size - 59 * kPage - (kPage - 16));
  obj[size - kPage] = 1;  // in the last whole page: now the partial last page counts
  EXPECT_EQ(touchedBytes(obj, size, kPage), size - 58 * kPage);
}

TEST(TouchPages, ReleasingAPartLeavesTheRestResident) {
  Mapping m(32);
  ASSERT_NE(m.base(), nullptr);
  const std::uint64_t size = 32 * kPage;
  // Only [8 pages + 100, 32 pages): whole pages 9..31 go.
  ASSERT_TRUE(releasePages(m.base(), 8 * kPage + 100, size, kPage));
  EXPECT_EQ(touchedBytes(m.base(), size, kPage), 9 * kPage);
  EXPECT_EQ(m.base()[8 * kPage + 99], 0xab);
}

TEST(TouchPages, SmallObjectsAndUnmappedRanges) {
  Mapping m(4);
  ASSERT_NE(m.base(), nullptr);
  // No whole page inside: nothing to give back, everything counts as touched.
  EXPECT_TRUE(releasePages(m.base() + 8, 0, kPage, kPage));
  EXPECT_EQ(touchedBytes(m.base() + 8, kPage, kPage), kPage);
  // A range that is no longer mapped: madvise fails, and so does the measurement.
  void* gone = ::mmap(nullptr, 4 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(gone, MAP_FAILED);
  ::munmap(gone, 4 * kPage);
  EXPECT_FALSE(releasePages(gone, 0, 4 * kPage, kPage));
  EXPECT_EQ(touchedBytes(gone, 4 * kPage, kPage), kTouchUnknown);
}

}  // namespace
