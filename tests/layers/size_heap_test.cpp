#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>

#include "strata/representation/size_heap.hpp"
#include "strata/top/mmap_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "common/differential.hpp"

using namespace strata;

using Sized = SizeHeap<SbrkHeap<>>;
static_assert(SizedHeap<Sized> && Sized::Alignment == 16);

TEST(SizeHeap, RecordsRoundedSizeBelowObject) {
  Sized h;
  void* p = h.malloc(20);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(h.getSize(p), 32u);
  EXPECT_EQ(detail::header_word(p), 32u);
  EXPECT_EQ(h.bytesHeld(), 48u);  // 16-byte header + 32
  EXPECT_EQ(h.getSize(nullptr), 0u);
  h.free(p);
  h.free(nullptr);
}

TEST(SizeHeap, OverflowingRequestsAreNull) {
  SizeHeap<MmapHeap> h;
  for (std::size_t n : {SIZE_MAX, SIZE_MAX - 15, SIZE_MAX - 16, SIZE_MAX - 31}) {
    errno = 0;
    EXPECT_EQ(h.malloc(n), nullptr) << n;
    EXPECT_EQ(errno, ENOMEM);
  }
}

TEST(SizeHeap, DifferentialOverMmap) {
  test::expectEverythingReturned<SizeHeap<MmapHeap>>(
      {.seed = 3, .ops = 100'000, .maxLive = 256, .sizes = test::SizeMix::Medium});
}
