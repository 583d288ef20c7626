#include <gtest/gtest.h>
#include <malloc.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "strata/detail/header.hpp"
#include "strata/representation/coalesceable_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/mmap_heap.hpp"
#include "strata/top/sbrk_heap.hpp"

using namespace strata;

using SbrkTags = CoalesceableHeap<SbrkHeap<>>;
using MallocTags = CoalesceableHeap<MallocHeap>;

static_assert(SizedHeap<SbrkTags> && SbrkTags::Alignment == 16);
static_assert(ClearableHeap<SbrkTags> && !ClearableHeap<MallocTags>);
static_assert(ContiguousHeap<SbrkHeap<>> && !ContiguousHeap<MallocHeap> &&
              !ContiguousHeap<MmapHeap>);

namespace {
std::byte* at(void* p, std::ptrdiff_t off) { return static_cast<std::byte*>(p) + off; }

constexpr std::size_t kInUse = detail::kFlagInUse;
constexpr std::size_t kPrevInUse = detail::kFlagPrevInUse;
constexpr std::size_t kFirst = detail::kFlagFirstInRun;

// Fills the whole usable size of p, the tail that overlaps the next block's prevSize too.
void fill(void* p, std::size_t n, unsigned char v) { std::memset(p, v, n); }
bool holds(void* p, std::size_t n, unsigned char v) {
  for (std::size_t i = 0; i < n; ++i)
    if (static_cast<unsigned char*>(p)[i] != v) return false;
  return true;
}
}  // namespace

static_assert(SbrkTags::MinBlockSize == 32 && SbrkTags::MinPayload == 24);
static_assert(SbrkTags::usableFor(0) == 24 && SbrkTags::usableFor(24) == 24 &&
              SbrkTags::usableFor(25) == 40 && SbrkTags::usableFor(40) == 40 &&
              SbrkTags::usableFor(41) == 56 && SbrkTags::usableFor(1000) == 1000);

TEST(CoalesceableHeap, HeaderLayoutAndFence) {
  MallocTags h;
  void* p = h.malloc(40);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(detail::is_aligned(p, 16));
  // One header word per block: 40 bytes take a 48-byte block, all but the word usable.
  EXPECT_EQ(h.getSize(p), 40u);
  EXPECT_EQ(MallocTags::blockSize(p), 48u);
  EXPECT_EQ(detail::header_word(p), 48u | kInUse | kPrevInUse | kFirst);
  EXPECT_TRUE(MallocTags::firstInRun(p));
  EXPECT_TRUE(MallocTags::lastInRun(p));
  EXPECT_FALSE(MallocTags::isFree(p));
  EXPECT_FALSE(MmapHeap::isMapped(p));

  void* fence = MallocTags::next(p);
  EXPECT_EQ(fence, at(p, 48));
  EXPECT_TRUE(MallocTags::isFence(fence));
  EXPECT_EQ(detail::header_word(fence), kInUse | kPrevInUse);
  // The fence's prevSize is the last word of p's payload: p's bytes while p is in use.
  EXPECT_EQ(&MallocTags::prevSize(fence), reinterpret_cast<std::size_t*>(at(p, 32)));
  EXPECT_FALSE(MallocTags::isNextFree(p));  // a fence is in use
  EXPECT_FALSE(MallocTags::isPrevFree(p));  // nothing before the first block
  EXPECT_FALSE(MallocTags::isPrevFree(fence));
  // The run: the first block's unused prevSize word, the block, the fence's word.
  EXPECT_EQ(h.bytesHeld(), ::malloc_usable_size(at(p, -16)));
  EXPECT_GE(h.bytesHeld(), 8u + 48u + 8u);
  h.free(p);
}

TEST(CoalesceableHeap, SmallRequestsGetRoomForTwoLinksAndAFooter) {
  MallocTags h;
  void* p = h.malloc(0);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(h.getSize(p), 24u);
  EXPECT_EQ(MallocTags::blockSize(p), 32u);
  h.free(p);
}

TEST(CoalesceableHeap, FlagsLiveInTheSharedWord) {
  MallocTags h;
  void* p = h.malloc(100);  // block 112, usable 104
  void* fence = MallocTags::next(p);
  MallocTags::markFree(p);
  EXPECT_TRUE(MallocTags::isFree(p));
  EXPECT_EQ(detail::header_word(p), 112u | kPrevInUse | kFirst);
  EXPECT_EQ(h.getSize(p), 104u);
  // Marking free writes the footer and tells the successor.
  EXPECT_EQ(MallocTags::prevSize(fence), 112u);
  EXPECT_EQ(detail::header_word(fence), kInUse);
  EXPECT_TRUE(MallocTags::isPrevFree(fence));
  EXPECT_EQ(MallocTags::prev(fence), p);
  MallocTags::markInUse(p);
  EXPECT_FALSE(MallocTags::isFree(p));
  EXPECT_EQ(h.getSize(p), 104u);
  EXPECT_EQ(detail::header_word(fence), kInUse | kPrevInUse);
  EXPECT_FALSE(MallocTags::isPrevFree(fence));
  h.free(p);
}

TEST(CoalesceableHeap, AnInUseBlockOwnsItsWholeUsableSize) {
  SbrkTags h;
  void* a = h.malloc(40);
  void* b = h.malloc(40);
  void* c = h.malloc(40);
  ASSERT_EQ(b, SbrkTags::next(a));
  ASSERT_EQ(c, SbrkTags::next(b));
  for (void* p : {a, b, c}) fill(p, h.getSize(p), 0xa5);
  // Every byte of a's payload, including the word b's prevSize would use, was the
  // program's; none of it touched b's header, so b still sees a in use.
  EXPECT_EQ(detail::header_word(b), 48u | kInUse | kPrevInUse);
  EXPECT_FALSE(SbrkTags::isPrevFree(b));
  EXPECT_FALSE(SbrkTags::isPrevFree(c));
  // Freeing b writes its footer into its own payload and b's flag into c, nothing of a or c.
  SbrkTags::markFree(b);
  EXPECT_TRUE(holds(a, h.getSize(a), 0xa5));
  EXPECT_TRUE(holds(c, h.getSize(c), 0xa5));
  EXPECT_TRUE(SbrkTags::isPrevFree(c));
  EXPECT_EQ(SbrkTags::prev(c), b);
  EXPECT_FALSE(SbrkTags::isPrevFree(b));
  SbrkTags::markInUse(b);
  EXPECT_FALSE(SbrkTags::isPrevFree(c));
}

TEST(CoalesceableHeap, SplitAndMergeKeepBoundaryTagsConsistent) {
  MallocTags h;
  void* p = h.malloc(256);  // block 272, usable 264
  void* fence = MallocTags::next(p);
  ASSERT_EQ(h.getSize(p), 264u);
  // Too small a remainder: no split.
  EXPECT_EQ(MallocTags::split(p, 248), nullptr);  // 16 left
  EXPECT_EQ(MallocTags::split(p, 264), nullptr);
  // 272 -> 80 (72 usable) + a 192-byte block (184 usable).
  void* r = MallocTags::split(p, 72);
  ASSERT_EQ(r, at(p, 80));
  EXPECT_EQ(h.getSize(p), 72u);
  EXPECT_EQ(detail::header_word(p), 80u | kInUse | kPrevInUse | kFirst);
  EXPECT_FALSE(MallocTags::isFree(p));
  EXPECT_EQ(h.getSize(r), 184u);
  EXPECT_FALSE(MallocTags::isFree(r));  // a remainder is handed over in use
  EXPECT_EQ(detail::header_word(r), 192u | kInUse | kPrevInUse);
  EXPECT_FALSE(MallocTags::firstInRun(r));
  EXPECT_EQ(MallocTags::next(r), fence);
  EXPECT_FALSE(MallocTags::isPrevFree(fence));

  MallocTags::markFree(r);
  EXPECT_TRUE(MallocTags::isNextFree(p));
  EXPECT_TRUE(MallocTags::isPrevFree(fence));
  EXPECT_EQ(MallocTags::prevSize(fence), 192u);
  EXPECT_EQ(MallocTags::prev(fence), r);
  EXPECT_FALSE(MallocTags::isPrevFree(r));
  MallocTags::merge(p, r);
  EXPECT_EQ(h.getSize(p), 264u);
  EXPECT_FALSE(MallocTags::isFree(p));  // merge keeps the first block's flags
  EXPECT_TRUE(MallocTags::firstInRun(p));
  EXPECT_EQ(MallocTags::next(p), fence);
  EXPECT_FALSE(MallocTags::isPrevFree(fence)) << "the merged block is in use";

  // The same with a free block: split hands the remainder its prevSize, merge the footer.
  MallocTags::markFree(p);
  void* q = MallocTags::split(p, 24);
  ASSERT_EQ(q, at(p, 32));
  EXPECT_TRUE(MallocTags::isFree(p));
  EXPECT_TRUE(MallocTags::isPrevFree(q));
  EXPECT_EQ(MallocTags::prev(q), p);
  EXPECT_FALSE(MallocTags::isPrevFree(fence));  // q is in use
  MallocTags::markFree(q);
  MallocTags::merge(p, q);
  EXPECT_EQ(MallocTags::blockSize(p), 272u);
  EXPECT_TRUE(MallocTags::isPrevFree(fence));
  EXPECT_EQ(MallocTags::prev(fence), p);
  MallocTags::markInUse(p);
  h.free(p);
  EXPECT_EQ(h.bytesHeld(), 0u);
}

TEST(CoalesceableHeap, ContiguousParentJoinsRunsAtTheOldFence) {
  SbrkTags h;
  void* a = h.malloc(40);  // block of 48 + the run's two words
  void* b = h.malloc(100);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b, SbrkTags::next(a)) << "the second block starts where the first run's fence was";
  EXPECT_FALSE(SbrkTags::lastInRun(a));
  EXPECT_TRUE(SbrkTags::lastInRun(b));
  EXPECT_FALSE(SbrkTags::firstInRun(b));
  EXPECT_EQ(h.getSize(b), 104u);
  // The first run: prevSize word, 48-byte block, fence word. The second request: 112 bytes
  // only, b's 104 usable and the new fence's word, since the old fence's word became b's
  // header and the old fence's prevSize was already a's.
  EXPECT_EQ(h.bytesHeld(), (8u + 48u + 8u) + 112u);
  EXPECT_FALSE(SbrkTags::isPrevFree(b));
  SbrkTags::markFree(a);
  EXPECT_TRUE(SbrkTags::isPrevFree(b));
  EXPECT_EQ(SbrkTags::prev(b), a);
}

TEST(CoalesceableHeap, AJoinedBlockKeepsWhatTheFenceKnewOfItsPredecessor) {
  SbrkTags h;
  void* a = h.malloc(100);
  SbrkTags::markFree(a);  // the fence now records a free predecessor
  void* b = h.malloc(100);
  ASSERT_EQ(b, SbrkTags::next(a));
  EXPECT_TRUE(SbrkTags::isPrevFree(b)) << "the old fence's flag must carry over";
  EXPECT_EQ(SbrkTags::prev(b), a);
  EXPECT_FALSE(SbrkTags::isPrevFree(SbrkTags::next(b)));
}

template <class H>
concept GrowsInPlace = requires(H& h, void* p) { h.lastFreeBlock(); h.extendLast(p, 1); };
static_assert(GrowsInPlace<SbrkTags> && !GrowsInPlace<MallocTags>);

TEST(CoalesceableHeap, AFreeLastBlockGrowsInPlaceByWhatItLacks) {
  SbrkTags h;
  void* a = h.malloc(100);  // block 112
  void* b = h.malloc(200);  // block 208, the last of the run
  EXPECT_EQ(h.lastFreeBlock(), nullptr) << "b is in use";
  SbrkTags::markFree(b);
  ASSERT_EQ(h.lastFreeBlock(), b);
  const std::size_t held = h.bytesHeld();
  void* c = h.extendLast(b, 1000);  // block 1008: 800 more
  ASSERT_EQ(c, b);
  EXPECT_EQ(h.bytesHeld(), held + 800u);
  EXPECT_FALSE(SbrkTags::isFree(c));
  EXPECT_EQ(detail::header_word(c), 1008u | kInUse | kPrevInUse);
  void* fence = SbrkTags::next(c);
  EXPECT_TRUE(SbrkTags::isFence(fence));
  EXPECT_EQ(detail::header_word(fence), kInUse | kPrevInUse);
  EXPECT_EQ(h.lastFreeBlock(), nullptr);
  // A free last block big enough already is only marked in use.
  SbrkTags::markFree(c);
  EXPECT_EQ(h.extendLast(c, 500), c);
  EXPECT_EQ(SbrkTags::blockSize(c), 1008u);
  EXPECT_EQ(h.bytesHeld(), held + 800u);
  // The run continues after the grown block.
  void* d = h.malloc(40);
  EXPECT_EQ(d, SbrkTags::next(c));
  EXPECT_FALSE(SbrkTags::isPrevFree(d));
  // A free block that is not the last one is not offered.
  SbrkTags::markFree(a);
  EXPECT_EQ(h.lastFreeBlock(), nullptr);
  // Overflowing requests leave the block alone.
  SbrkTags::markFree(d);
  errno = 0;
  EXPECT_EQ(h.extendLast(d, SIZE_MAX - 4), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_TRUE(SbrkTags::isFree(d));
  EXPECT_EQ(SbrkTags::blockSize(d), 48u);
  h.clear();
  EXPECT_EQ(h.lastFreeBlock(), nullptr);
}

TEST(CoalesceableHeap, NonContiguousParentKeepsRunsApart) {
  MallocTags h;
  void* a = h.malloc(40);
  void* b = h.malloc(40);
  EXPECT_TRUE(MallocTags::firstInRun(b));
  EXPECT_TRUE(MallocTags::lastInRun(a));
  h.free(a);
  h.free(b);
}

TEST(CoalesceableHeap, WholeRunsGoBackToTheParent) {
  MallocTags h;
  void* p = h.malloc(1000);
  EXPECT_GT(h.bytesHeld(), 1000u);
  h.free(p);
  EXPECT_EQ(h.bytesHeld(), 0u);
  h.free(nullptr);
}

TEST(CoalesceableHeap, PartOfARunStaysAndIsNeverMergedWith) {
  MallocTags h;
  void* p = h.malloc(256);
  void* r = MallocTags::split(p, 72);
  ASSERT_NE(r, nullptr);
  const std::size_t held = h.bytesHeld();
  MallocTags::markFree(p);
  h.free(p);  // not a whole run: cannot go back, and must not look free
  EXPECT_EQ(h.bytesHeld(), held);
  EXPECT_FALSE(MallocTags::isFree(p));
  EXPECT_FALSE(MallocTags::isPrevFree(r));
  // Put the run back together by hand, then it can be returned.
  MallocTags::merge(p, r);
  h.free(p);
  EXPECT_EQ(h.bytesHeld(), 0u);
}

TEST(CoalesceableHeap, ClearStartsAFreshRun) {
  SbrkTags h;
  h.malloc(100);
  h.malloc(100);
  h.clear();
  EXPECT_EQ(h.bytesHeld(), 0u);
  void* p = h.malloc(100);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(SbrkTags::firstInRun(p)) << "must not join to a fence that clear() discarded";
  EXPECT_EQ(h.getSize(p), 104u);
}

TEST(CoalesceableHeap, FreeingTheLastRunStopsJoining) {
  SbrkTags h;
  void* a = h.malloc(100);
  h.free(a);  // whole run: handed back (a no-op for sbrk), and forgotten
  void* b = h.malloc(100);
  EXPECT_TRUE(SbrkTags::firstInRun(b));
}

TEST(CoalesceableHeap, HugeRequestsAreNull) {
  SbrkTags s;
  MallocTags m;
  // Each of these overflows the header arithmetic or exceeds PTRDIFF_MAX once the header
  // and fence are added, so none reaches the C library (which, under ASan, would abort).
  for (std::size_t n : {SIZE_MAX, SIZE_MAX - 15, SIZE_MAX - 32, SIZE_MAX - 47,
                        std::size_t{PTRDIFF_MAX}, std::size_t{PTRDIFF_MAX} - 16}) {
    errno = 0;
    EXPECT_EQ(s.malloc(n), nullptr) << n;
    EXPECT_EQ(errno, ENOMEM);
    errno = 0;
    EXPECT_EQ(m.malloc(n), nullptr) << n;
    EXPECT_EQ(errno, ENOMEM);
  }
  // Beyond the sbrk reservation.
  errno = 0;
  EXPECT_EQ(s.malloc(std::size_t{1} << 50), nullptr);
  EXPECT_EQ(errno, ENOMEM);
}
