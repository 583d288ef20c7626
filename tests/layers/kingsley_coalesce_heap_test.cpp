#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <vector>

#include "strata/general/kingsley_coalesce_heap.hpp"
#include "strata/general/kingsley_heap.hpp"
#include "strata/representation/coalesceable_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/utility/ansi_wrapper.hpp"
#include "common/differential.hpp"

using namespace strata;

using KC = KingsleyCoalesceHeap<>;
static_assert(SizedHeap<KC> && KC::Alignment == 16 && ClearableHeap<KC>);

TEST(KingsleyCoalesceHeap, RoundsToPowersOfTwo) {
  KC h;
  for (std::size_t n : {1u, 16u, 17u, 100u, 1000u, 4096u, 4097u, 100000u}) {
    void* p = h.malloc(n);
    ASSERT_NE(p, nullptr);
    // Fresh from the top: the class size in a block 16 bytes bigger, as KingsleyHeap's, of
    // which the boundary tags use only the header word.
    const std::size_t cls = KingsleyClasses::class2size(KingsleyClasses::size2class(n));
    EXPECT_EQ(h.getSize(p), cls + 8) << n;
    EXPECT_EQ(CoalesceableHeap<SbrkHeap<>>::blockSize(p), cls + 16) << n;
  }
}

TEST(KingsleyCoalesceHeap, ReusesFreedMemoryForOtherSizes) {
  KC h;
  void* p[8];
  for (auto& q : p) q = h.malloc(64);
  void* guard = h.malloc(16);
  for (auto* q : p) h.free(q);
  const std::size_t held = h.bytesHeld();
  void* big = h.malloc(500);  // class 512: eight merged 80-byte blocks hold it
  EXPECT_EQ(big, p[0]);
  EXPECT_EQ(h.bytesHeld(), held);
  h.free(big);
  h.free(guard);
}

// The paper's experiment in miniature: many small objects die, then larger ones are made.
// Kingsley can only reuse within a class; with coalescing the dead small objects become room
// for the large ones.
TEST(KingsleyCoalesceHeap, HoldsClearlyLessThanKingsleyAfterSizesShift) {
  auto workload = [](auto& h) {
    std::vector<void*> small(30000), large(5000);
    for (auto& q : small) q = h.malloc(24);
    for (auto* q : small) h.free(q);
    for (auto& q : large) q = h.malloc(200);
    for (auto* q : large) h.free(q);
  };
  KingsleyHeap<SbrkHeap<>> plain;
  KC coalescing;
  workload(plain);
  workload(coalescing);
  EXPECT_LT(coalescing.peakBytesHeld() * 10, plain.peakBytesHeld() * 6)
      << "coalescing " << coalescing.peakBytesHeld() << " vs plain " << plain.peakBytesHeld();
  EXPECT_LT(coalescing.bytesHeld() * 10, plain.bytesHeld() * 6);
}

TEST(KingsleyCoalesceHeap, HugeRequestsAreNull) {
  KC h;
  for (std::size_t n : {SIZE_MAX, SIZE_MAX - 16, std::size_t{1} << 50, std::size_t{1} << 47}) {
    errno = 0;
    EXPECT_EQ(h.malloc(n), nullptr) << n;
    EXPECT_EQ(errno, ENOMEM);
  }
}

TEST(KingsleyCoalesceHeap, DifferentialMixed) {
  test::expectEverythingReturned<ANSIWrapper<KingsleyCoalesceHeap<>>>(
      {.seed = 91, .ops = 1'000'000, .zeroSizes = true});
}

TEST(KingsleyCoalesceHeap, DifferentialSmall) {
  test::expectEverythingReturned<ANSIWrapper<KingsleyCoalesceHeap<>>>(
      {.seed = 92, .ops = 1'000'000, .maxLive = 20000, .sizes = test::SizeMix::Small});
}

// Over MallocHeap nothing comes back unless every run coalesced into one block again.
TEST(KingsleyCoalesceHeap, DifferentialEverythingCoalescesBackOverMalloc) {
  test::expectEverythingReturned<ANSIWrapper<KingsleyCoalesceHeap<MallocHeap>>>(
      {.seed = 93, .ops = 300'000, .useClear = false});
}

TEST(KingsleyCoalesceHeap, DifferentialWithClear) {
  test::expectEverythingReturned<ANSIWrapper<KingsleyCoalesceHeap<>>>(
      {.seed = 94, .ops = 300'000, .useClear = true});
}
