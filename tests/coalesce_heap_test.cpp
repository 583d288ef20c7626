#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>

#include "strata/building/adapt_heap.hpp"
#include "strata/building/coalesce_heap.hpp"
#include "strata/combining/seg_heap.hpp"
#include "strata/representation/coalesceable_heap.hpp"
#include "strata/representation/size_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/utility/ansi_wrapper.hpp"
#include "support/differential.hpp"

using namespace strata;

template <class Top>
using Store = SegHeap<64, LeaClasses, DLListHeap, CoalesceableHeap<Top>>;
using Coal = CoalesceHeap<Store<SbrkHeap<>>>;
using Tags = CoalesceableHeap<SbrkHeap<>>;

static_assert(SizedHeap<Coal> && Coal::Alignment == 16);
static_assert(CoalescingStore<Store<SbrkHeap<>>>);
// Without boundary tags, or with bins that cannot remove, there is nothing to coalesce with.
static_assert(!CoalescingStore<SegHeap<64, LeaClasses, DLListHeap, SizeHeap<SbrkHeap<>>>>);
static_assert(!CoalescingStore<SegHeap<64, LeaClasses, SLListHeap, CoalesceableHeap<SbrkHeap<>>>>);
static_assert(!CoalescingStore<Tags>);

TEST(CoalesceHeap, SplitsABigFreeBlockAndKeepsTheRest) {
  Coal h;
  void* a = h.malloc(1000);  // 1008 usable
  void* guard = h.malloc(16);
  h.free(a);
  const std::size_t held = h.bytesHeld();
  void* b = h.malloc(100);
  ASSERT_EQ(b, a);
  EXPECT_EQ(h.getSize(b), 112u);
  void* rest = Tags::next(b);
  EXPECT_TRUE(Tags::isFree(rest));
  EXPECT_EQ(h.getSize(rest), 1008u - 112u - 16u);
  // The 880-byte remainder sits in the 768 bin: it serves class-768 requests, split again.
  void* c = h.malloc(700);
  EXPECT_EQ(c, rest);
  EXPECT_EQ(h.getSize(c), 704u);
  EXPECT_TRUE(Tags::isFree(Tags::next(c)));
  EXPECT_EQ(h.bytesHeld(), held);
  h.free(b);
  h.free(c);
  h.free(guard);
}

TEST(CoalesceHeap, NoSplitWhenTheRemainderIsTooSmall) {
  Coal h;
  void* a = h.malloc(64);
  void* guard = h.malloc(16);
  h.free(a);
  void* b = h.malloc(40);  // 64 - 48 = 16 left: less than a minimum block
  EXPECT_EQ(b, a);
  EXPECT_EQ(h.getSize(b), 64u);
  h.free(b);
  h.free(guard);
}

TEST(CoalesceHeap, MergesWithFreePredecessor) {
  Coal h;
  void* a = h.malloc(100);
  void* b = h.malloc(100);
  void* guard = h.malloc(100);
  h.free(a);
  h.free(b);
  EXPECT_TRUE(Tags::isFree(a));
  EXPECT_EQ(h.getSize(a), 112u + 16u + 112u);
  EXPECT_EQ(Tags::next(a), guard);
  EXPECT_EQ(Tags::prev(guard), a);
  h.free(guard);
}

TEST(CoalesceHeap, MergesWithFreeSuccessor) {
  Coal h;
  void* a = h.malloc(100);
  void* b = h.malloc(100);
  void* guard = h.malloc(100);
  h.free(b);
  h.free(a);
  EXPECT_TRUE(Tags::isFree(a));
  EXPECT_EQ(Tags::next(a), guard);
  EXPECT_EQ(Tags::prevSize(guard), Tags::blockSize(a));
  h.free(guard);
}

TEST(CoalesceHeap, MergesWithBothNeighboursAndReusesForALargerRequest) {
  Coal h;
  void* a = h.malloc(200);
  void* b = h.malloc(200);
  void* c = h.malloc(200);
  void* guard = h.malloc(16);
  h.free(a);
  h.free(c);
  const std::size_t held = h.bytesHeld();
  h.free(b);
  EXPECT_EQ(Tags::next(a), guard);
  const std::size_t merged = h.getSize(a);
  EXPECT_GE(merged, 600u + 32u);
  // The single merged block serves a request bigger than any of its parts, without growth.
  void* big = h.malloc(600);
  EXPECT_EQ(big, a);
  EXPECT_EQ(h.bytesHeld(), held);
  h.free(big);
  h.free(guard);
}

TEST(CoalesceHeap, LastBlockBeforeTheFenceMergesWithNothingBeyond) {
  Coal h;
  void* a = h.malloc(100);
  void* b = h.malloc(100);  // the last block of the run, followed by the fence
  h.free(b);
  EXPECT_TRUE(Tags::lastInRun(b));
  EXPECT_TRUE(Tags::isFence(Tags::next(b)));
  EXPECT_FALSE(Tags::isFree(Tags::next(b)));
  h.free(a);
  EXPECT_TRUE(Tags::firstInRun(a));
  EXPECT_TRUE(Tags::lastInRun(a));
}

TEST(CoalesceHeap, MergesAcrossTopHeapRequests) {
  Coal h;
  void* a = h.malloc(3000);
  h.free(a);  // the whole run is one free block in the bins
  void* b = h.malloc(5000);  // too big for it: the top heap grows, right after a's fence
  ASSERT_EQ(Tags::prev(b), a);
  h.free(b);
  EXPECT_TRUE(Tags::isFree(a));
  EXPECT_TRUE(Tags::lastInRun(a)) << "a and b merged into one block spanning both requests";
  EXPECT_GE(h.getSize(a), 8000u);
  const std::size_t held = h.bytesHeld();
  void* c = h.malloc(7000);
  EXPECT_EQ(c, a);
  EXPECT_EQ(h.bytesHeld(), held);
  h.free(c);
}

TEST(CoalesceHeap, NonContiguousRunsCoalesceWithinThemselvesAndGoBackWhole) {
  CoalesceHeap<Store<MallocHeap>> h;
  void* a = h.malloc(3000);
  void* a1 = h.malloc(100);  // carved from a new run: bins are empty
  h.free(a);
  void* b = h.malloc(1000);  // split from a's run
  EXPECT_EQ(b, a);
  EXPECT_TRUE(Tags::firstInRun(a1));
  h.free(b);
  EXPECT_TRUE(Tags::isFree(a));
  EXPECT_TRUE(Tags::firstInRun(a) && Tags::lastInRun(a)) << "b and its remainder merged back";
  EXPECT_EQ(h.getSize(a), 3008u);
  h.free(a1);
  EXPECT_GT(h.bytesHeld(), 0u);  // free runs stay in the bins until the heap goes
}

TEST(CoalesceHeap, HugeRequestsAreNull) {
  Coal h;
  for (std::size_t n : {SIZE_MAX, SIZE_MAX - 16, std::size_t{PTRDIFF_MAX}, std::size_t{1} << 50}) {
    errno = 0;
    EXPECT_EQ(h.malloc(n), nullptr) << n;
    EXPECT_EQ(errno, ENOMEM);
  }
}

// With MallocHeap on top, every run goes back only if it was coalesced into one block:
// expectEverythingReturned then proves that no free block was left unmerged.
TEST(CoalesceHeap, DifferentialEverythingCoalescesBackOverMalloc) {
  test::expectEverythingReturned<ANSIWrapper<CoalesceHeap<Store<MallocHeap>>>>(
      {.seed = 41, .ops = 300'000});
}

TEST(CoalesceHeap, DifferentialOverSbrkMedium) {
  test::expectEverythingReturned<ANSIWrapper<Coal>>(
      {.seed = 42, .ops = 300'000, .sizes = test::SizeMix::Medium, .useClear = true});
}
