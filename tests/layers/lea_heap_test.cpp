#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>

#include "strata/general/lea_heap.hpp"
#include "strata/representation/coalesceable_heap.hpp"
#include "strata/top/mmap_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/utility/ansi_wrapper.hpp"
#include "common/differential.hpp"

using namespace strata;

using Lea = LeaHeap<>;
using Tags = CoalesceableHeap<SbrkHeap<>>;
static_assert(SizedHeap<Lea> && Lea::Alignment == 16 && MaxAlignedHeap<Lea>);
static_assert(SizedHeap<ANSIWrapper<Lea>>);

TEST(LeaHeap, LargeRequestsAreMappedOthersAreNot) {
  Lea h;
  void* big = h.malloc(kLeaMmapThreshold);
  void* medium = h.malloc(kLeaMmapThreshold - 1);
  void* small = h.malloc(24);
  EXPECT_TRUE(MmapHeap::isMapped(big));
  EXPECT_FALSE(MmapHeap::isMapped(medium));
  EXPECT_FALSE(MmapHeap::isMapped(small));
  EXPECT_GE(h.getSize(big), kLeaMmapThreshold);
  EXPECT_GE(h.getSize(medium), kLeaMmapThreshold - 1);
  EXPECT_EQ(h.getSize(small), 24u);  // a 32-byte block: one header word per object
  EXPECT_GT(h.big().bytesHeld(), kLeaMmapThreshold);
  h.free(big);
  EXPECT_EQ(h.big().bytesHeld(), 0u) << "a mapped object goes back to the system at once";
  h.free(medium);
  h.free(small);
}

TEST(LeaHeap, MemoryFreedFromMappedRequestsIsReusedNotRemapped) {
  Lea h;
  EXPECT_EQ(h.threshold(), kLeaMmapThreshold);
  void* big = h.malloc(300'000);
  ASSERT_TRUE(MmapHeap::isMapped(big));
  h.free(big);
  EXPECT_EQ(h.big().bytesHeld(), 0u);
  EXPECT_GT(h.threshold(), 300'000u) << "freeing a mapped object raises the threshold";
  // Now a program that keeps allocating and freeing blocks of that size recycles one block
  // of the coalescing heap: nothing more is mapped, and the heap stops growing.
  void* first = h.malloc(300'000);
  EXPECT_FALSE(MmapHeap::isMapped(first));
  h.free(first);
  const std::size_t held = h.bytesHeld();
  for (int i = 0; i < 100; ++i) {
    void* p = h.malloc(200'000 + 1000 * static_cast<std::size_t>(i));
    ASSERT_NE(p, nullptr);
    EXPECT_FALSE(MmapHeap::isMapped(p));
    EXPECT_EQ(p, first);
    h.free(p);
  }
  EXPECT_EQ(h.bytesHeld(), held);
  EXPECT_EQ(h.big().bytesHeld(), 0u);
}

TEST(LeaHeap, LargeRequestsUseFreeMemoryOfTheHeapBeforeMapping) {
  Lea h;
  void* p[3];
  for (auto& q : p) q = h.malloc(100'000);  // below the threshold: adjacent heap blocks
  void* guard = h.malloc(100);
  for (auto* q : p) h.free(q);  // one free block of 300 KB
  const std::size_t held = h.bytesHeld();
  void* big = h.malloc(250'000);
  EXPECT_FALSE(MmapHeap::isMapped(big));
  EXPECT_EQ(big, p[0]);
  EXPECT_EQ(h.bytesHeld(), held);
  EXPECT_EQ(h.big().bytesHeld(), 0u);
  h.free(big);
  h.free(guard);
}

TEST(LeaHeap, SmallObjectsAreReusedExactly) {
  Lea h;
  void* a = h.malloc(40);
  EXPECT_EQ(h.getSize(a), 40u);  // a 48-byte block, as glibc gives
  h.free(a);
  EXPECT_EQ(h.malloc(33), a);
  h.free(a);
  // Quick lists reach glibc's fastbin limit: requests of up to 128 bytes, and all others
  // that get the same 136 usable bytes.
  void* b = h.malloc(128);
  void* guard = h.malloc(16);
  EXPECT_EQ(h.getSize(b), 136u);
  h.free(b);
  EXPECT_FALSE(Tags::isFree(b)) << "kept on a quick list, not coalesced";
  EXPECT_EQ(h.malloc(121), b);
  EXPECT_EQ(LeaMainHeap<SbrkHeap<>>::QuickListMax, 136u);
  void* c = h.malloc(137);  // 152 usable: medium, coalesced at once
  h.free(c);
  EXPECT_TRUE(Tags::isFree(c));
  h.free(b);
  h.free(guard);
}

TEST(LeaHeap, FreedMediumMemoryIsCoalescedAndReused) {
  Lea h;
  void* p[100];
  for (auto& q : p) q = h.malloc(1000);
  void* guard = h.malloc(100);
  for (auto* q : p) h.free(q);
  const std::size_t held = h.bytesHeld();
  void* big = h.malloc(90'000);  // needs ninety of the freed blocks merged
  EXPECT_EQ(big, p[0]);
  EXPECT_EQ(h.bytesHeld(), held);
  h.free(big);
  h.free(guard);
}

TEST(LeaHeap, FreedSmallMemoryServesMediumRequestsAfterAFlush) {
  Lea h;
  void* p[1000];
  for (auto& q : p) q = h.malloc(48);
  void* guard = h.malloc(100);
  for (auto* q : p) h.free(q);
  const std::size_t held = h.bytesHeld();
  void* m = h.malloc(40'000);
  EXPECT_EQ(m, p[0]);
  EXPECT_EQ(h.bytesHeld(), held);
  EXPECT_TRUE(Tags::isFree(Tags::next(m)));  // the rest of the flushed run, merged
  h.free(m);
  h.free(guard);
}

TEST(LeaHeap, HugeRequestsAreNull) {
  Lea h;
  for (std::size_t n : {SIZE_MAX, SIZE_MAX - 16, SIZE_MAX - 4096, std::size_t{PTRDIFF_MAX},
                        std::size_t{1} << 62}) {
    errno = 0;
    EXPECT_EQ(h.malloc(n), nullptr) << n;
    EXPECT_EQ(errno, ENOMEM);
  }
  ANSIWrapper<Lea> a;
  errno = 0;
  EXPECT_EQ(a.calloc(SIZE_MAX / 2, 3), nullptr);
  EXPECT_EQ(errno, ENOMEM);
}

TEST(LeaHeap, DifferentialMixed) {
  test::expectEverythingReturned<ANSIWrapper<LeaHeap<>>>(
      {.seed = 81, .ops = 1'000'000, .zeroSizes = true});
}

TEST(LeaHeap, DifferentialSmall) {
  test::expectEverythingReturned<ANSIWrapper<LeaHeap<>>>(
      {.seed = 82, .ops = 1'000'000, .maxLive = 20000, .sizes = test::SizeMix::Small});
}

// Large objects around the moving mmap threshold: mapped and heap objects live side by side,
// freed mapped objects raise the threshold, big requests take free fits from the heap first.
TEST(LeaHeap, DifferentialLarge) {
  test::expectEverythingReturned<ANSIWrapper<LeaHeap<>>>(
      {.seed = 83, .ops = 20'000, .maxLive = 64, .sizes = test::SizeMix::Large});
}
