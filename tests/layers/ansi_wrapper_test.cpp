#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "strata/general/kingsley_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/utility/ansi_wrapper.hpp"

using namespace strata;

using Ansi = ANSIWrapper<KingsleyHeap<SbrkHeap<>>>;

TEST(ANSIWrapper, MallocZeroIsUniqueAndFreeable) {
  Ansi h;
  void* a = h.malloc(0);
  void* b = h.malloc(0);
  ASSERT_TRUE(a && b);
  EXPECT_NE(a, b);
  h.free(a);
  h.free(b);
  h.free(nullptr);
}

TEST(ANSIWrapper, CallocZeroesAndChecksOverflow) {
  Ansi h;
  auto* p = static_cast<unsigned char*>(h.malloc(256));
  std::memset(p, 0xff, 256);
  h.free(p);
  auto* q = static_cast<unsigned char*>(h.calloc(16, 16));
  ASSERT_EQ(q, p);  // the dirty object is reused, and must come back zeroed
  for (int i = 0; i < 256; ++i) ASSERT_EQ(q[i], 0) << i;
  h.free(q);
  errno = 0;
  EXPECT_EQ(h.calloc(SIZE_MAX / 2, 3), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(h.calloc(std::size_t{1} << 33, std::size_t{1} << 33), nullptr);
  EXPECT_EQ(errno, ENOMEM);
}

TEST(ANSIWrapper, ReallocPreservesGrowsShrinks) {
  Ansi h;
  auto* p = static_cast<char*>(h.realloc(nullptr, 40));
  ASSERT_NE(p, nullptr);
  std::memcpy(p, "0123456789012345678901234567890123456789", 40);
  EXPECT_EQ(h.realloc(p, 60), p);  // fits the 64-byte class: in place
  auto* q = static_cast<char*>(h.realloc(p, 1000));
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(std::memcmp(q, "0123456789012345678901234567890123456789", 40), 0);
  auto* r = static_cast<char*>(h.realloc(q, 10));  // far smaller: moves to free space
  EXPECT_EQ(std::memcmp(r, "0123456789", 10), 0);
  EXPECT_EQ(h.realloc(r, 0), nullptr);  // frees, as glibc does
}

TEST(ANSIWrapper, ReallocFailureKeepsOldBlock) {
  Ansi h;
  auto* p = static_cast<char*>(h.malloc(100));
  std::memset(p, 'x', 100);
  errno = 0;
  EXPECT_EQ(h.realloc(p, SIZE_MAX - 4), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(p[i], 'x');
  h.free(p);
}

TEST(ANSIWrapper, OutOfMemorySetsEnomem) {
  ANSIWrapper<KingsleyHeap<SbrkHeap<(2u << 20)>>> h;
  errno = 0;
  EXPECT_EQ(h.malloc(4u << 20), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_EQ(h.getSize(nullptr), 0u);
}
