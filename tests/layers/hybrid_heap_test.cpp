#include "strata/combining/hybrid_heap.hpp"

#include <gtest/gtest.h>

#include "strata/general/kingsley_heap.hpp"
#include "strata/representation/size_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/mmap_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/utility/ansi_wrapper.hpp"
#include "strata/utility/debug_heap.hpp"
#include "common/differential.hpp"

using namespace strata;

using Small = KingsleyHeap<SbrkHeap<>>;
using Big = SizeHeap<MmapHeap>;
using Hybrid = HybridHeap<1024, Small, Big>;
static_assert(SizedHeap<Hybrid> && AccountedHeap<Hybrid> && Hybrid::Alignment == 16);
static_assert(!ClearableHeap<Hybrid>);  // SizeHeap<MmapHeap> cannot clear
static_assert(ClearableHeap<HybridHeap<1024, Small, KingsleyHeap<SbrkHeap<>>>>);
static_assert(HybridCompatible<Small, Big>);
// MallocHeap's getSize asks the C library about the pointer, not a header in the object:
// it cannot size Kingsley's objects, so the pair is rejected.
static_assert(!HybridCompatible<Small, MallocHeap>);
static_assert(!HybridCompatible<MallocHeap, Big>);
// DebugHeap keeps its own header, not the shared size word.
static_assert(!HybridCompatible<DebugHeap<Small>, Big>);

TEST(HybridHeap, RoutesBySizeBothWays) {
  Hybrid h;
  void* small = h.malloc(100);
  EXPECT_EQ(h.getSize(small), 128u);
  EXPECT_GT(h.small().bytesHeld(), 0u);
  EXPECT_EQ(h.Big::bytesHeld(), 0u);

  void* big = h.malloc(5000);
  EXPECT_GE(h.getSize(big), 5000u);
  EXPECT_GT(h.Big::bytesHeld(), 0u);
  h.free(big);
  EXPECT_EQ(h.Big::bytesHeld(), 0u);  // went back to MmapHeap: unmapped

  h.free(small);
  EXPECT_EQ(h.malloc(100), small);  // went back to Kingsley's bin
  h.free(small);
}

TEST(HybridHeap, ThresholdIsInclusive) {
  Hybrid h;
  void* at = h.malloc(1024);
  EXPECT_EQ(h.Big::bytesHeld(), 0u);
  void* above = h.malloc(1025);
  EXPECT_GT(h.Big::bytesHeld(), 0u);
  h.free(above);
  EXPECT_EQ(h.Big::bytesHeld(), 0u);
  h.free(at);
  EXPECT_EQ(h.malloc(1000), at);  // same Kingsley class, reused
  h.free(at);
}

TEST(HybridHeap, AccountsBothSidesAndThePeakOfTheSum) {
  Hybrid h;
  void* big = h.malloc(1 << 20);
  const std::size_t bigBytes = h.Big::bytesHeld();
  EXPECT_EQ(h.bytesHeld(), bigBytes);
  h.free(big);
  void* small = h.malloc(64);
  const std::size_t smallBytes = h.small().bytesHeld();
  EXPECT_EQ(h.bytesHeld(), smallBytes);
  // The two were never held at once: the peak is the larger, not the sum of peaks.
  EXPECT_EQ(h.peakBytesHeld(), bigBytes);
  void* big2 = h.malloc(1 << 20);
  EXPECT_EQ(h.peakBytesHeld(), bigBytes + smallBytes);
  h.free(big2);
  h.free(small);
}

TEST(HybridHeap, ClearsBothSides) {
  HybridHeap<256, Small, KingsleyHeap<SbrkHeap<>>> h;
  h.malloc(10);
  h.malloc(10000);
  EXPECT_GT(h.small().bytesHeld(), 0u);
  h.clear();
  EXPECT_EQ(h.bytesHeld(), 0u);
}

TEST(HybridHeap, DifferentialKingsleyAndMmap) {
  test::expectEverythingReturned<ANSIWrapper<Hybrid>>(
      {.seed = 61, .ops = 300'000, .maxLive = 2000, .zeroSizes = true});
  test::expectEverythingReturned<ANSIWrapper<HybridHeap<64, Small, Big>>>(
      {.seed = 62, .ops = 300'000, .sizes = test::SizeMix::Small});
}
