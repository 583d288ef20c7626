// PageQueues over DelayedPurge, SegmentSlots, SegmentCache and AccountedSegments (no thread
// binding): pop and refill, the fresh flag only for blocks carved from memory that reads as
// zero, a full page parked and reclaimed through freeRemote from another thread, the last
// empty page of a small class kept (none while over the allowance), large classes one block per page, and tidy releasing
// everything; a large class's page parked as soon as its block is out.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "strata/combining/fine_size_classes.hpp"
#include "strata/strata_heap/accounted_segments.hpp"
#include "strata/strata_heap/delayed_purge.hpp"
#include "strata/strata_heap/page_queues.hpp"
#include "strata/strata_heap/segment_cache.hpp"
#include "strata/strata_heap/segment_slots.hpp"
#include "strata/top/segment_heap.hpp"

using namespace strata;

using Source = SegmentCache<AccountedSegments<SegmentHeap<>>>;
using Queues = PageQueues<FineSizeClasses<3>, DelayedPurge<SegmentSlots<Source, QueuedPage>>>;
using Page = Queues::Page;
constexpr std::size_t kSlot = Queues::SlotSize;

namespace {
Page* pageOf(void* b) {
  auto* seg = reinterpret_cast<Queues::Segment*>(reinterpret_cast<std::uintptr_t>(b) &
                                                 ~(Queues::SegmentSize - 1));
  return Queues::pageAt(seg, b);
}

struct Fixture {
  Fixture() : source(std::make_unique<Source>()), heap(std::make_unique<Queues>(*source)) {}
  std::unique_ptr<Source> source;
  std::unique_ptr<Queues> heap;

  void* alloc(unsigned c, bool* freshOut = nullptr) {
    bool fresh = false;
    void* b = heap->pop(c);
    if (b == nullptr) b = heap->refill(c, fresh);
    if (freshOut) *freshOut = fresh;
    return b;
  }
  void free(void* b) {
    Page* page = pageOf(b);
    if (Queues::pushLocal(page, b)) heap->freeLocalSlow(page);
  }
};

}  // namespace

TEST(PageQueues, PopAndRefill) {
  Fixture f;
  const unsigned c = Queues::classOf(64);
  EXPECT_EQ(f.heap->pop(c), nullptr) << "no page yet";
  bool fresh = false;
  void* first = f.heap->refill(c, fresh);
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(fresh);
  Page* page = pageOf(first);
  ASSERT_NE(page, nullptr);
  EXPECT_EQ(page->blockSize, 64u);
  EXPECT_EQ(f.source->stats().bytesInUse, std::size_t{page->capacity} * 64);
  std::set<void*> seen{first};
  while (void* b = f.heap->pop(c)) {
    EXPECT_TRUE(seen.insert(b).second);
    EXPECT_EQ(pageOf(b), page);
    EXPECT_EQ((static_cast<std::byte*>(b) - page->start) % 64, 0);
  }
  EXPECT_EQ(seen.size(), page->capacity);
  void* more = f.heap->refill(c, fresh);
  EXPECT_EQ(pageOf(more), page) << "the page carves more before a new one starts";
  EXPECT_TRUE(fresh);
}

TEST(PageQueues, FreedBlocksAreReusedAndNotFresh) {
  Fixture f;
  const unsigned c = Queues::classOf(1024);
  std::vector<void*> blocks;
  while (blocks.size() < 3) blocks.push_back(f.alloc(c));
  while (void* b = f.heap->pop(c)) blocks.push_back(b);  // the carved batch, all out
  std::memset(blocks[1], 0x77, 1024);
  f.free(blocks[1]);
  bool fresh = true;
  void* again = f.alloc(c, &fresh);
  EXPECT_EQ(again, blocks[1]);
  EXPECT_FALSE(fresh) << "a block that was used is not fresh";
  EXPECT_EQ(static_cast<unsigned char*>(again)[100], 0x77);
}

TEST(PageQueues, ReusedSlotsAreNotFreshUntilDecommittedNow) {
  Fixture f;
  const unsigned c = Queues::classOf(200 << 10);  // a large class: 4 slots
  const unsigned small = Queues::classOf(32);
  void* keep = f.alloc(small);  // keeps the segment from going to the cache
  bool fresh = false;
  void* big = f.alloc(c, &fresh);
  EXPECT_TRUE(fresh);
  std::memset(big, 0x55, 200 << 10);
  f.free(big);
  void* again = f.alloc(c, &fresh);
  EXPECT_EQ(again, big) << "the released (dirty) slots";
  EXPECT_FALSE(fresh);
  EXPECT_EQ(static_cast<unsigned char*>(again)[4096], 0x55);
  f.free(again);
  f.heap->tidy();  // decommits released slots with Now
  again = f.alloc(c, &fresh);
  EXPECT_EQ(again, big);
  EXPECT_TRUE(fresh) << "decommitted with Now: reads as zero";
  for (std::size_t i = 0; i < (200 << 10); i += 4096) ASSERT_EQ(static_cast<unsigned char*>(again)[i], 0);
  f.free(again);
  f.free(keep);
}

TEST(PageQueues, LargeClassesHaveOneBlockPerPage) {
  Fixture f;
  const std::size_t n = Queues::MaxSmall + 1;
  const unsigned c = Queues::classOf(n);
  EXPECT_GE(c, Queues::ClassCount);
  EXPECT_EQ(Queues::classOf(Queues::MaxSize), Queues::AllClasses - 1);
  void* a = f.alloc(c);
  void* b = f.alloc(c);
  ASSERT_TRUE(a && b);
  Page* pa = pageOf(a);
  Page* pb = pageOf(b);
  EXPECT_NE(pa, pb);
  EXPECT_EQ(pa->reserved, 1u);
  EXPECT_EQ(pa->start, a);
  EXPECT_EQ(Queues::slotsOf(pa), (n + kSlot - 1) / kSlot);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % kSlot, 0u);
  EXPECT_NE(reinterpret_cast<std::uintptr_t>(a) % Queues::SegmentSize, 0u) << "never slot 0";
  const std::size_t used = f.heap->usedSlots();
  f.free(a);
  EXPECT_EQ(f.heap->usedSlots(), used - Queues::slotsOf(pb)) << "an empty large page goes back";
  void* biggest = f.alloc(Queues::classOf(Queues::MaxSize));
  ASSERT_NE(biggest, nullptr);
  EXPECT_EQ(pageOf(biggest)->blockSize, Queues::MaxSize);
  f.free(biggest);
  f.free(b);
}

TEST(PageQueues, TheLastEmptyPageOfASmallClassIsKept) {
  Fixture f;
  const unsigned c = Queues::classOf(256);
  void* b = f.alloc(c);
  Page* page = pageOf(b);
  const std::size_t used = f.heap->usedSlots();
  f.free(b);
  EXPECT_EQ(page->used, 0u);
  EXPECT_EQ(f.heap->usedSlots(), used) << "kept: churn around zero costs nothing";
  EXPECT_EQ(f.alloc(c), b);
}

TEST(PageQueues, OverTheAllowanceNoEmptyPageIsKept) {
  Fixture f;
  const unsigned small = Queues::classOf(32), mid = Queues::classOf(512), c = Queues::classOf(256);
  void* a = f.alloc(small);
  void* b = f.alloc(mid);
  std::vector<void*> many;
  for (std::size_t i = 0; i < 24 * kSlot / 256; ++i) many.push_back(f.alloc(c));
  ASSERT_GE(f.heap->usedSlots(), 24u);
  for (void* p : many) f.free(p);
  EXPECT_TRUE(f.heap->overAllowance()) << "24 slots free, the allowance is 4 and 1/8 of 2";
  const std::size_t used = f.heap->usedSlots();
  f.free(a);
  f.free(b);
  EXPECT_EQ(f.heap->usedSlots(), used - 2) << "the current pages went back when they emptied";
  // The cache took the empty segment; a refill that finds the heap within its allowance
  // ends the episode, and pages are kept again.
  void* d = f.alloc(small);
  const std::size_t now = f.heap->usedSlots();
  f.free(d);
  EXPECT_EQ(f.heap->usedSlots(), now) << "kept: churn around zero costs nothing";
}

TEST(PageQueues, AFullPageIsParkedAndReclaimedByARemoteFree) {
  Fixture f;
  const unsigned c = Queues::classOf(8192);
  std::vector<void*> onFirst;
  Page* first = nullptr;
  void* other = nullptr;
  for (int i = 0; i < 1000 && other == nullptr; ++i) {
    void* b = f.alloc(c);
    ASSERT_NE(b, nullptr);
    if (first == nullptr) first = pageOf(b);
    if (pageOf(b) == first) onFirst.push_back(b);
    else other = b;
  }
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(onFirst.size(), first->reserved);
  EXPECT_TRUE(first->inFullList) << "found full by the refill";
  EXPECT_EQ(first->parkState(), SizeClassPage::kParked);
  Queues* owner = f.heap.get();
  void* given = onFirst[3];
  std::thread([&] { Queues::freeRemote(owner, first, given); }).join();
  EXPECT_EQ(first->parkState(), SizeClassPage::kClaimed) << "the free claimed it";
  while (f.heap->pop(c) != nullptr) {
  }  // the new page's carved blocks
  bool fresh = true;
  void* back = f.heap->refill(c, fresh);
  EXPECT_EQ(back, given) << "the block freed remotely is reused";
  EXPECT_FALSE(fresh);
  EXPECT_FALSE(first->inFullList);
  EXPECT_EQ(first->parkState(), SizeClassPage::kNormal);
}

// A large class's page (one block) is parked as soon as its block is handed out, so a free
// by another thread hands it back for the owner's next refill of any class. Left in its
// queue, it waited on the thread-free list for the next refill of its own class: under a
// mix of many large sizes freed across threads, every heap held a page of megabytes per
// large class (malloc_soak's resident size grew to several times the live size).
TEST(PageQueues, ALargeBlockFreedRemotelyGoesBackOnAnyRefill) {
  Fixture f;
  const unsigned c = Queues::classOf(20 * kSlot);
  void* big = f.alloc(c);
  ASSERT_NE(big, nullptr);
  Page* page = pageOf(big);
  EXPECT_TRUE(page->inFullList);
  EXPECT_EQ(page->parkState(), SizeClassPage::kParked);
  const std::size_t used = f.heap->usedSlots();
  Queues* owner = f.heap.get();
  std::thread([&] { Queues::freeRemote(owner, page, big); }).join();
  EXPECT_EQ(page->parkState(), SizeClassPage::kClaimed);
  void* small = f.alloc(Queues::classOf(64));  // a refill of another class
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(f.heap->usedSlots(), used - 20 + Queues::slotsOf(pageOf(small)))
      << "the large page went back to its segment";
  f.free(small);
}

TEST(PageQueues, RemoteFreesIntoAQueuedPageAreCollected) {
  Fixture f;
  const unsigned c = Queues::classOf(48);
  std::vector<void*> blocks;
  blocks.push_back(f.alloc(c));
  while (void* b = f.heap->pop(c)) blocks.push_back(b);
  Page* page = pageOf(blocks[0]);
  Queues* owner = f.heap.get();
  std::thread([&] {
    for (std::size_t i = 0; i < blocks.size(); i += 2) Queues::freeRemote(owner, page, blocks[i]);
  }).join();
  EXPECT_EQ(page->parkState(), SizeClassPage::kNormal) << "not parked: no hand-over";
  std::set<void*> back;
  bool fresh = true;
  back.insert(f.heap->refill(c, fresh));
  EXPECT_FALSE(fresh);
  while (void* b = f.heap->pop(c)) back.insert(b);
  EXPECT_EQ(back.size(), (blocks.size() + 1) / 2);
  for (std::size_t i = 0; i < blocks.size(); i += 2) EXPECT_TRUE(back.count(blocks[i]));
}

TEST(PageQueues, TidyReleasesEverything) {
  Fixture f;
  std::vector<void*> blocks;
  for (std::size_t n : {16, 100, 1000, 20000, 300000})
    for (int i = 0; i < 40; ++i) blocks.push_back(f.alloc(Queues::classOf(n)));
  EXPECT_GT(f.heap->usedSlots(), 0u);
  EXPECT_GT(f.source->stats().bytesInUse, 0u);
  for (std::size_t i = 0; i < 3 * 40; ++i) f.free(blocks[i]);
  EXPECT_GT(f.heap->usedSlots(), 0u) << "small classes keep their last page";
  for (std::size_t i = 3 * 40; i < blocks.size(); ++i) f.free(blocks[i]);
  f.heap->tidy();
  EXPECT_EQ(f.heap->usedSlots(), 0u);
  EXPECT_EQ(f.heap->dirtySlots(), 0u);
  EXPECT_EQ(f.source->stats().bytesInUse, 0u);
  EXPECT_GT(f.source->cachedSegments(), 0u) << "empty segments wait in the shared cache";
  f.source->purgeCache(0, true);
  EXPECT_EQ(f.source->committed(), 0u);
}
