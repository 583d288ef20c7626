#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "strata/building/adapt_heap.hpp"
#include "strata/building/coalesce_heap.hpp"
#include "strata/combining/seg_heap.hpp"
#include "strata/representation/coalesceable_heap.hpp"
#include "strata/representation/size_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/utility/ansi_wrapper.hpp"
#include "common/differential.hpp"

using namespace strata;

// LeaClasses over usable sizes, which CoalesceableHeap makes 8 more than a multiple of 16.
using Classes = ShiftedClasses<LeaClasses, 8>;
template <class Top>
using Store = SegHeap<64, Classes, DLListHeap, CoalesceableHeap<Top>>;
using Coal = CoalesceHeap<Store<SbrkHeap<>>>;
using Tags = CoalesceableHeap<SbrkHeap<>>;

static_assert(SizedHeap<Coal> && Coal::Alignment == 16);
static_assert(CoalescingStore<Store<SbrkHeap<>>>);
// Without boundary tags, or with bins that cannot remove, there is nothing to coalesce with.
static_assert(!CoalescingStore<SegHeap<64, Classes, DLListHeap, SizeHeap<SbrkHeap<>>>>);
static_assert(!CoalescingStore<SegHeap<64, Classes, SLListHeap, CoalesceableHeap<SbrkHeap<>>>>);
static_assert(Classes::class2size(0) == 24 && Classes::class2size(1) == 40 &&
              Classes::class2size(31) == 520 && Classes::class2size(32) == 648);
static_assert(Classes::size2class(24) == 0 && Classes::size2class(25) == 1 &&
              Classes::size2class(40) == 1 && Classes::size2class(520) == 31 &&
              Classes::size2class(521) == 32);
static_assert(!CoalescingStore<Tags>);

TEST(CoalesceHeap, SplitsABigFreeBlockAndKeepsTheRest) {
  Coal h;
  void* a = h.malloc(1000);  // a 1008-byte block, 1000 usable
  void* guard = h.malloc(16);
  h.free(a);
  const std::size_t held = h.bytesHeld();
  void* b = h.malloc(100);
  ASSERT_EQ(b, a);
  EXPECT_EQ(h.getSize(b), 104u);  // a 112-byte block
  void* rest = Tags::next(b);
  EXPECT_TRUE(Tags::isFree(rest));
  EXPECT_EQ(Tags::blockSize(rest), 1008u - 112u);
  EXPECT_EQ(h.getSize(rest), 1008u - 112u - 8u);
  EXPECT_TRUE(Tags::isPrevFree(guard));
  EXPECT_EQ(Tags::prev(guard), rest);
  EXPECT_FALSE(Tags::isPrevFree(rest));
  // The 888-byte remainder sits in the 776 bin: it serves class-776 requests, split again.
  void* c = h.malloc(700);
  EXPECT_EQ(c, rest);
  EXPECT_EQ(h.getSize(c), 712u);
  EXPECT_TRUE(Tags::isFree(Tags::next(c)));
  EXPECT_EQ(Tags::next(Tags::next(c)), guard);
  EXPECT_EQ(h.bytesHeld(), held);
  h.free(b);
  h.free(c);
  h.free(guard);
}

TEST(CoalesceHeap, NoSplitWhenTheRemainderIsTooSmall) {
  Coal h;
  void* a = h.malloc(64);  // an 80-byte block
  void* guard = h.malloc(16);
  h.free(a);
  void* b = h.malloc(50);  // a 64-byte block would leave 16: less than a minimum block
  EXPECT_EQ(b, a);
  EXPECT_EQ(h.getSize(b), 72u);
  EXPECT_FALSE(Tags::isPrevFree(guard));
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
  EXPECT_EQ(h.getSize(a), 104u + 8u + 104u);  // two 112-byte blocks, one header word
  EXPECT_EQ(Tags::next(a), guard);
  EXPECT_TRUE(Tags::isPrevFree(guard));
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
  EXPECT_EQ(Tags::blockSize(a), 2 * 112u);
  EXPECT_EQ(Tags::next(a), guard);
  EXPECT_TRUE(Tags::isPrevFree(guard));
  EXPECT_EQ(Tags::prevSize(guard), Tags::blockSize(a));
  h.free(guard);
}

TEST(CoalesceHeap, MergesWithBothNeighboursAndReusesForALargerRequest) {
  Coal h;
  void* a = h.malloc(240);  // three 256-byte blocks
  void* b = h.malloc(240);
  void* c = h.malloc(240);
  void* guard = h.malloc(16);
  h.free(a);
  h.free(c);
  const std::size_t held = h.bytesHeld();
  h.free(b);
  EXPECT_EQ(Tags::next(a), guard);
  EXPECT_TRUE(Tags::isFree(a));
  EXPECT_TRUE(Tags::isPrevFree(guard));
  EXPECT_EQ(Tags::prev(guard), a);
  EXPECT_EQ(h.getSize(a), 3 * 256u - 8u);
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
  void* b = h.malloc(5000);  // nothing free: the top heap grows, right after a's fence
  ASSERT_EQ(b, Tags::next(a));
  EXPECT_TRUE(Tags::lastInRun(b));
  h.free(a);
  EXPECT_TRUE(Tags::isPrevFree(b));
  EXPECT_EQ(Tags::prev(b), a);
  h.free(b);
  EXPECT_TRUE(Tags::isFree(a));
  EXPECT_TRUE(Tags::lastInRun(a)) << "a and b merged into one block spanning both requests";
  EXPECT_EQ(Tags::blockSize(a), 3008u + 5008u);
  const std::size_t held = h.bytesHeld();
  void* c = h.malloc(7000);
  EXPECT_EQ(c, a);
  EXPECT_EQ(h.bytesHeld(), held);
  h.free(c);
}

TEST(CoalesceHeap, AFreeLastBlockGrowsInPlace) {
  Coal h;
  void* a = h.malloc(1000);
  void* b = h.malloc(3000);  // the last block of the run
  h.free(b);
  EXPECT_EQ(h.lastFreeBlock(), b);
  const std::size_t held = h.bytesHeld();
  // Too big for b: b grows by what it lacks instead of being left behind as a hole.
  void* c = h.malloc(5000);
  EXPECT_EQ(c, b);
  EXPECT_EQ(h.getSize(c), 5000u);
  EXPECT_EQ(h.bytesHeld(), held + (5008u - 3008u));
  EXPECT_TRUE(Tags::lastInRun(c));
  EXPECT_FALSE(Tags::isPrevFree(Tags::next(c)));
  EXPECT_EQ(h.lastFreeBlock(), nullptr);
  // A request that fits is served from the bins as usual: the free last block is split and
  // its tail stays the free last block.
  h.free(c);
  void* d = h.malloc(100);
  EXPECT_EQ(d, b);
  EXPECT_EQ(h.lastFreeBlock(), Tags::next(d));
  h.free(d);
  h.free(a);
  EXPECT_TRUE(Tags::isFree(a) && Tags::lastInRun(a));
  EXPECT_EQ(h.lastFreeBlock(), a);
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
  EXPECT_EQ(h.getSize(a), 3000u);
  h.free(a1);
  EXPECT_GT(h.bytesHeld(), 0u);  // free runs stay in the bins until the heap goes
}

// A block's last 8 usable bytes are the next block's prevSize field: while the block is in
// use they are the program's, and freeing or merging its neighbours must not touch them.
TEST(CoalesceHeap, FreeingNeighboursNeverTouchesALiveBlocksTail) {
  Coal h;
  constexpr int kObjects = 60;
  void* p[kObjects];
  for (int i = 0; i < kObjects; ++i) {
    p[i] = h.malloc(static_cast<std::size_t>(8 + 29 * i));
    std::memset(p[i], i + 1, h.getSize(p[i]));  // the whole usable size, tail included
  }
  // Free two of every three, in an order that merges with predecessors and successors.
  for (int i = 1; i < kObjects; i += 3) h.free(p[i]);
  for (int i = 2; i < kObjects; i += 3) h.free(p[i]);
  for (int i = 0; i < kObjects; i += 3) {
    const auto* b = static_cast<const unsigned char*>(p[i]);
    const std::size_t n = h.getSize(p[i]);
    for (std::size_t k = 0; k < n; ++k) ASSERT_EQ(b[k], i + 1) << "object " << i << " byte " << k;
    if (i + 3 < kObjects) {
      EXPECT_TRUE(Tags::isNextFree(p[i]));
      EXPECT_EQ(Tags::next(Tags::next(p[i])), p[i + 3]) << "the two freed blocks merged";
      EXPECT_TRUE(Tags::isPrevFree(p[i + 3]));
    }
  }
  // Reuse the freed memory and fill it completely; the survivors are still intact.
  void* q[kObjects];
  int reused = 0;
  const std::size_t held = h.bytesHeld();
  for (int i = 0; i + 3 < kObjects; i += 3) {
    q[reused] = h.malloc(h.getSize(Tags::next(p[i])));
    if (h.getSize(q[reused]) <= 520) {
      EXPECT_EQ(q[reused], Tags::next(p[i])) << "an exact fit from its own bin";
    }
    std::memset(q[reused], 0xee, h.getSize(q[reused]));
    ++reused;
  }
  EXPECT_EQ(h.bytesHeld(), held) << "the freed blocks served every request";
  for (int i = 0; i < kObjects; i += 3) {
    const auto* b = static_cast<const unsigned char*>(p[i]);
    for (std::size_t k = 0; k < h.getSize(p[i]); ++k) ASSERT_EQ(b[k], i + 1);
    EXPECT_FALSE(Tags::isPrevFree(Tags::next(p[i])));
  }
  for (int i = 0; i < reused; ++i) h.free(q[i]);
  for (int i = 0; i < kObjects; i += 3) h.free(p[i]);
  EXPECT_TRUE(Tags::isFree(p[0]));
  EXPECT_TRUE(Tags::lastInRun(p[0])) << "everything merged back into one block";
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
