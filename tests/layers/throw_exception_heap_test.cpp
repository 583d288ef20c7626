#include "strata/utility/throw_exception_heap.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <new>
#include <utility>

#include "strata/representation/size_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/null_heap.hpp"
#include "strata/top/static_buffer_heap.hpp"

using namespace strata;

using Throwing = ThrowExceptionHeap<SizeHeap<MallocHeap>>;
static_assert(SizedHeap<Throwing> && AccountedHeap<Throwing> && Throwing::Alignment == 16);
static_assert(!noexcept(std::declval<Throwing&>().malloc(1)), "malloc is the one that throws");
static_assert(noexcept(std::declval<Throwing&>().free(nullptr)));
static_assert(ClearableHeap<ThrowExceptionHeap<StaticBufferHeap<64>>>);

TEST(ThrowExceptionHeap, PassesObjectsThrough) {
  Throwing h;
  void* p = h.malloc(100);
  ASSERT_NE(p, nullptr);
  EXPECT_GE(h.getSize(p), 100u);
  EXPECT_GT(h.bytesHeld(), 100u);
  h.free(p);
  h.free(nullptr);
  EXPECT_EQ(h.bytesHeld(), 0u);
}

TEST(ThrowExceptionHeap, ThrowsWhenTheParentHasNothing) {
  ThrowExceptionHeap<NullHeap<16>> empty;
  EXPECT_THROW(empty.malloc(16), std::bad_alloc);
}

TEST(ThrowExceptionHeap, ThrowsOnExhaustionAndRecoversAfterClear) {
  ThrowExceptionHeap<StaticBufferHeap<256>> h;
  EXPECT_NO_THROW(h.malloc(200));
  EXPECT_THROW(h.malloc(100), std::bad_alloc);
  h.clear();
  EXPECT_NO_THROW(h.malloc(100));
}

TEST(ThrowExceptionHeap, ThrowsOnOverflowingRequests) {
  Throwing h;
  for (std::size_t n : {SIZE_MAX, SIZE_MAX - 16, std::size_t{PTRDIFF_MAX} + 1})
    EXPECT_THROW(h.malloc(n), std::bad_alloc) << n;
}
