#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>

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
}  // namespace

TEST(CoalesceableHeap, HeaderLayoutAndFence) {
  MallocTags h;
  void* p = h.malloc(40);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(detail::is_aligned(p, 16));
  EXPECT_EQ(h.getSize(p), 48u);
  EXPECT_EQ(detail::header_word(p), 48u | detail::kFlagInUse);
  EXPECT_EQ(MallocTags::prevSize(p), 0u);
  EXPECT_TRUE(MallocTags::firstInRun(p));
  EXPECT_TRUE(MallocTags::lastInRun(p));
  EXPECT_FALSE(MallocTags::isFree(p));
  EXPECT_FALSE(MmapHeap::isMapped(p));

  void* fence = MallocTags::next(p);
  EXPECT_EQ(fence, at(p, 64));
  EXPECT_TRUE(MallocTags::isFence(fence));
  EXPECT_EQ(detail::header_word(fence), detail::kFlagInUse);
  EXPECT_EQ(MallocTags::prevSize(fence), 64u);
  EXPECT_EQ(MallocTags::prev(fence), p);
  EXPECT_FALSE(MallocTags::isNextFree(p));  // a fence is in use
  EXPECT_FALSE(MallocTags::isPrevFree(p));  // nothing before the first block
  h.free(p);
}

TEST(CoalesceableHeap, SmallRequestsGetRoomForTwoLinks) {
  MallocTags h;
  void* p = h.malloc(0);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(h.getSize(p), 16u);
  h.free(p);
}

TEST(CoalesceableHeap, FlagsLiveInTheSharedWord) {
  MallocTags h;
  void* p = h.malloc(100);
  MallocTags::markFree(p);
  EXPECT_TRUE(MallocTags::isFree(p));
  EXPECT_EQ(detail::header_word(p), 112u);
  EXPECT_EQ(h.getSize(p), 112u);
  MallocTags::markInUse(p);
  EXPECT_FALSE(MallocTags::isFree(p));
  EXPECT_EQ(h.getSize(p), 112u);
  h.free(p);
}

TEST(CoalesceableHeap, SplitAndMergeKeepBoundaryTagsConsistent) {
  MallocTags h;
  void* p = h.malloc(256);
  void* fence = MallocTags::next(p);
  // Too small a remainder: no split.
  EXPECT_EQ(MallocTags::split(p, 240), nullptr);
  EXPECT_EQ(MallocTags::split(p, 256), nullptr);
  // 256 -> 64 + a 192-byte block (176 usable).
  void* r = MallocTags::split(p, 64);
  ASSERT_EQ(r, at(p, 80));
  EXPECT_EQ(h.getSize(p), 64u);
  EXPECT_FALSE(MallocTags::isFree(p));
  EXPECT_EQ(h.getSize(r), 176u);
  EXPECT_FALSE(MallocTags::isFree(r));  // a remainder is handed over in use
  EXPECT_EQ(MallocTags::prevSize(r), 80u);
  EXPECT_EQ(MallocTags::prev(r), p);
  EXPECT_EQ(MallocTags::next(r), fence);
  EXPECT_EQ(MallocTags::prevSize(fence), 192u);

  MallocTags::markFree(r);
  EXPECT_TRUE(MallocTags::isNextFree(p));
  EXPECT_TRUE(MallocTags::isPrevFree(fence));
  EXPECT_FALSE(MallocTags::isPrevFree(r));
  MallocTags::merge(p, r);
  EXPECT_EQ(h.getSize(p), 256u);
  EXPECT_FALSE(MallocTags::isFree(p));  // merge keeps the first block's flags
  EXPECT_EQ(MallocTags::next(p), fence);
  EXPECT_EQ(MallocTags::prevSize(fence), 272u);
  h.free(p);
}

TEST(CoalesceableHeap, ContiguousParentJoinsRunsAtTheOldFence) {
  SbrkTags h;
  void* a = h.malloc(40);  // block of 64 + fence
  void* b = h.malloc(100);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b, MallocTags::next(a)) << "the second block starts where the first run's fence was";
  EXPECT_EQ(SbrkTags::prevSize(b), 64u);
  EXPECT_EQ(SbrkTags::prev(b), a);
  EXPECT_FALSE(SbrkTags::lastInRun(a));
  EXPECT_TRUE(SbrkTags::lastInRun(b));
  EXPECT_EQ(h.getSize(b), 112u);
  // The first run: header, 48 payload, fence. The second request: 112 payload and a new
  // fence only, since the old fence became its header.
  EXPECT_EQ(h.bytesHeld(), (16u + 48u + 16u) + (112u + 16u));
  SbrkTags::markFree(a);
  EXPECT_TRUE(SbrkTags::isPrevFree(b));
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
  void* r = MallocTags::split(p, 64);
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
  EXPECT_EQ(h.getSize(p), 112u);
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
