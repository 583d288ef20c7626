// Bad input across compositions from every folder: requests near SIZE_MAX give nullptr with
// errno = ENOMEM (no header arithmetic may wrap into a small request), free(nullptr) does
// nothing, and the heap still works afterwards. ThrowExceptionHeap turns the same failures
// into std::bad_alloc.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>

#include "strata/strata.hpp"

using namespace strata;

namespace {

constexpr std::size_t kHuge[] = {
    SIZE_MAX,          SIZE_MAX - 1,      SIZE_MAX - 7,          SIZE_MAX - 8,
    SIZE_MAX - 15,     SIZE_MAX - 16,     SIZE_MAX - 31,         SIZE_MAX - 32,
    SIZE_MAX - 4095,   SIZE_MAX - 4096,   SIZE_MAX / 2 + 1,      SIZE_MAX / 2,
    std::size_t{1} << 62, std::size_t(PTRDIFF_MAX), std::size_t{1} << 48};

template <class H>
class BadInput : public ::testing::Test {};

using Small = SbrkHeap<(std::size_t{64} << 20)>;
using Compositions = ::testing::Types<
    MallocHeap, MmapHeap, SbrkHeap<>, StaticBufferHeap<4096>, SizeHeap<MmapHeap>,
    SizeHeap<Small>, FreelistHeap<SizeHeap<MallocHeap>>, BoundedFreelistHeap<4, SizeHeap<Small>>,
    ChunkHeap<65536, Small>, KingsleyHeap<Small>, KingsleyHeap<MallocHeap>,
    KingsleyCoalesceHeap<Small>, LeaHeap<>, LeaHeap<Small>, ANSIWrapper<KingsleyHeap<Small>>,
    ANSIWrapper<LeaHeap<>>, LockedHeap<SpinLock, KingsleyHeap<Small>>,
    ThreadHeap<2, KingsleyHeap<Small>>, PHOThreadHeap<2, KingsleyHeap<Small>>,
    DebugHeap<KingsleyHeap<Small>>, ProfileHeap<LeaHeap<>>,
    HybridHeap<4096, KingsleyHeap<Small>, SizeHeap<MmapHeap>>>;
TYPED_TEST_SUITE(BadInput, Compositions);

TYPED_TEST(BadInput, HugeRequestsAreNullWithEnomemAndTheHeapGoesOn) {
  const std::size_t before = processAccount().held();
  {
    auto heap = std::make_unique<TypeParam>();
    void* keep = heap->malloc(100);
    ASSERT_NE(keep, nullptr);
    std::memset(keep, 0x3c, 100);
    for (std::size_t n : kHuge) {
      errno = 0;
      EXPECT_EQ(heap->malloc(n), nullptr) << "malloc(" << n << ")";
      EXPECT_EQ(errno, ENOMEM) << "malloc(" << n << ")";
    }
    heap->free(nullptr);
    void* again = heap->malloc(200);
    ASSERT_NE(again, nullptr);
    std::memset(again, 0x5a, 200);
    for (int i = 0; i < 100; ++i) ASSERT_EQ(static_cast<unsigned char*>(keep)[i], 0x3c);
    heap->free(again);
    heap->free(keep);
  }
  EXPECT_EQ(processAccount().held(), before);
}

TEST(BadInputAnsi, CallocAndReallocOverflow) {
  ANSIWrapper<LeaHeap<>> heap;
  void* p = heap.malloc(64);
  std::memset(p, 1, 64);
  for (std::size_t n : kHuge) {
    errno = 0;
    EXPECT_EQ(heap.realloc(p, n), nullptr) << n;
    EXPECT_EQ(errno, ENOMEM);
    errno = 0;
    EXPECT_EQ(heap.calloc(n, 2), nullptr) << n;
    EXPECT_EQ(errno, ENOMEM);
  }
  for (int i = 0; i < 64; ++i) ASSERT_EQ(static_cast<unsigned char*>(p)[i], 1);
  heap.free(p);
}

TEST(BadInputThrow, ThrowExceptionHeapThrowsBadAlloc) {
  ThrowExceptionHeap<KingsleyHeap<Small>> heap;
  for (std::size_t n : kHuge) EXPECT_THROW((void)heap.malloc(n), std::bad_alloc) << n;
  void* p = heap.malloc(10);
  EXPECT_NE(p, nullptr);
  heap.free(p);
}

}  // namespace
