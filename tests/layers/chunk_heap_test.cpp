#include "strata/building/chunk_heap.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>

#include "strata/building/freelist_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/top/static_buffer_heap.hpp"
#include "common/differential.hpp"

using namespace strata;

using Chunks = ChunkHeap<4096, MallocHeap>;
static_assert(ClearableHeap<Chunks> && Chunks::Alignment == 16 && Chunks::MaxCarved == 4080);
static_assert(ClearableHeap<FreelistHeap<Chunks>>);
// Carved objects have no header: MallocHeap's getSize must not show through.
static_assert(!SizedHeap<Chunks> && !SizedHeap<FreelistHeap<Chunks>>);

namespace {
std::ptrdiff_t distance(void* a, void* b) {
  return static_cast<char*>(b) - static_cast<char*>(a);
}
}  // namespace

TEST(ChunkHeap, CarvesAdjacentAlignedObjects) {
  Chunks h;
  void* a = h.malloc(32);
  void* b = h.malloc(32);
  void* c = h.malloc(1);
  void* d = h.malloc(0);
  void* e = h.malloc(17);
  EXPECT_EQ(distance(a, b), 32);
  EXPECT_EQ(distance(b, c), 32);
  EXPECT_EQ(distance(c, d), 16);
  EXPECT_EQ(distance(d, e), 16);  // malloc(0) still takes a slot: pointers stay distinct
  for (void* p : {a, b, c, d, e}) EXPECT_TRUE(detail::is_aligned(p, 16));
  EXPECT_EQ(h.chunks(), 1u);
}

TEST(ChunkHeap, StartsANewChunkWhenTheCurrentOneIsFull) {
  Chunks h;
  for (int i = 0; i < 63; ++i) ASSERT_NE(h.malloc(64), nullptr);  // 63 * 64 = 4032 <= 4080
  EXPECT_EQ(h.chunks(), 1u);
  const std::size_t held = h.bytesHeld();
  ASSERT_NE(h.malloc(64), nullptr);
  EXPECT_EQ(h.chunks(), 2u);
  EXPECT_GT(h.bytesHeld(), held);
}

TEST(ChunkHeap, FreeDoesNothing) {
  Chunks h;
  void* a = h.malloc(100);
  const std::size_t held = h.bytesHeld();
  h.free(a);
  h.free(nullptr);
  EXPECT_EQ(h.bytesHeld(), held);
  EXPECT_NE(h.malloc(100), a);  // never reused by ChunkHeap itself
}

TEST(ChunkHeap, BigRequestsGetAChunkOfTheirOwn) {
  Chunks h;
  void* a = h.malloc(32);
  void* big = h.malloc(10000);
  ASSERT_NE(big, nullptr);
  EXPECT_TRUE(detail::is_aligned(big, 16));
  EXPECT_EQ(h.chunks(), 2u);
  std::memset(big, 1, 10000);
  void* b = h.malloc(32);
  EXPECT_EQ(distance(a, b), 32);  // the current chunk stayed current
  void* exact = h.malloc(Chunks::MaxCarved);  // fits a fresh shared chunk exactly
  EXPECT_EQ(h.chunks(), 3u);
  std::memset(exact, 2, Chunks::MaxCarved);
}

TEST(ChunkHeap, ClearAndDestructorGiveEveryChunkBack) {
  const std::size_t before = processAccount().held();
  {
    Chunks h;
    for (int i = 0; i < 1000; ++i) h.malloc(static_cast<std::size_t>(i % 200) + 1);
    h.malloc(100000);
    EXPECT_GT(h.chunks(), 10u);
    h.clear();
    EXPECT_EQ(h.chunks(), 0u);
    EXPECT_EQ(h.bytesHeld(), 0u);
    EXPECT_EQ(processAccount().held(), before);
    for (int i = 0; i < 1000; ++i) ASSERT_NE(h.malloc(64), nullptr);
    h.malloc(50000);
  }
  EXPECT_EQ(processAccount().held(), before);
}

TEST(ChunkHeap, OutOfMemoryIsNull) {
  ChunkHeap<4096, StaticBufferHeap<8192>> h;
  for (int i = 0; i < 2 * 63; ++i) ASSERT_NE(h.malloc(64), nullptr);
  EXPECT_EQ(h.malloc(64), nullptr);  // a third chunk does not fit the buffer
  for (std::size_t n : {SIZE_MAX, SIZE_MAX - 8, std::size_t{1} << 40}) {
    errno = 0;
    EXPECT_EQ(h.malloc(n), nullptr) << n;
    EXPECT_EQ(errno, ENOMEM);
  }
  h.clear();  // clears the static buffer too, so its space can be used again
  EXPECT_NE(h.malloc(64), nullptr);
}

TEST(ChunkHeap, ClearLetsAnSbrkParentReuseItsSpace) {
  ChunkHeap<4096, SbrkHeap<>> h;
  void* a = h.malloc(32);
  h.malloc(100000);
  h.clear();
  EXPECT_EQ(h.bytesHeld(), 0u);
  EXPECT_EQ(h.chunks(), 0u);
  EXPECT_EQ(h.malloc(32), a);
}

TEST(ChunkHeap, UnderAFreelistIsASingleSizeHeap) {
  FreelistHeap<ChunkHeap<65536, MallocHeap>> h;
  void* a = h.malloc(128);
  void* b = h.malloc(128);
  EXPECT_EQ(distance(a, b), 128);
  h.free(a);
  EXPECT_EQ(h.malloc(128), a);
  h.free(a);
  h.free(b);
}

TEST(ChunkHeap, DifferentialSingleSize) {
  // Every request is 128 bytes (Small draws at most 128).
  test::expectEverythingReturned<FreelistHeap<ChunkHeap<65536, MallocHeap>>>(
      {.seed = 51, .ops = 500'000, .maxLive = 20000, .sizes = test::SizeMix::Small,
       .useRealloc = false, .useClear = true, .minRequest = 128});
  test::expectEverythingReturned<FreelistHeap<ChunkHeap<4096, SbrkHeap<>>>>(
      {.seed = 52, .ops = 300'000, .sizes = test::SizeMix::Small, .useRealloc = false,
       .useClear = true, .minRequest = 128});
}
