#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>

#include "strata/general/kingsley_heap.hpp"
#include "strata/top/mmap_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/utility/ansi_wrapper.hpp"
#include "common/differential.hpp"

using namespace strata;

using Kingsley = KingsleyHeap<SbrkHeap<>>;
static_assert(SizedHeap<Kingsley> && Kingsley::Alignment == 16);
// A layer over MmapHeap must not inherit a resize that would treat its blocks as mappings.
static_assert(!ResizesInPlace<KingsleyHeap<MmapHeap>>);

TEST(KingsleyHeap, PowerOfTwoRounding) {
  Kingsley h;
  for (std::size_t n : {1u, 16u, 17u, 100u, 1000u, 4096u, 4097u, 100000u}) {
    void* p = h.malloc(n);
    ASSERT_NE(p, nullptr);
    const std::size_t s = h.getSize(p);
    EXPECT_GE(s, n);
    EXPECT_EQ(s & (s - 1), 0u) << "class size " << s << " is not a power of two";
    EXPECT_LT(s, 2 * n + 16);
    h.free(p);
  }
}

TEST(KingsleyHeap, NoReuseAcrossClasses) {
  Kingsley h;
  void* a = h.malloc(64);
  h.free(a);
  const std::size_t held = h.bytesHeld();
  void* b = h.malloc(100);  // class 128: must come from the top, not the freed 64
  EXPECT_NE(b, a);
  EXPECT_GT(h.bytesHeld(), held);
  EXPECT_EQ(h.malloc(50), a);
}

TEST(KingsleyHeap, HugeRequestsAreNull) {
  Kingsley h;
  for (std::size_t n : {SIZE_MAX, SIZE_MAX - 16, std::size_t{1} << 50, std::size_t{1} << 47}) {
    errno = 0;
    EXPECT_EQ(h.malloc(n), nullptr) << n;
    EXPECT_EQ(errno, ENOMEM);
  }
}

TEST(KingsleyHeap, DifferentialMixed) {
  test::expectEverythingReturned<ANSIWrapper<KingsleyHeap<SbrkHeap<>>>>(
      {.seed = 1, .ops = 1'000'000, .zeroSizes = true});
}

TEST(KingsleyHeap, DifferentialSmallChurn) {
  test::expectEverythingReturned<ANSIWrapper<KingsleyHeap<MmapHeap>>>(
      {.seed = 2, .ops = 1'000'000, .maxLive = 20000, .sizes = test::SizeMix::Small});
}
