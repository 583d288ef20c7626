// The harness itself: each check must catch a heap that breaks it. Each broken heap below
// wraps a correct one and breaks exactly one promise.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "strata/general/kingsley_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "common/differential.hpp"

using namespace strata;
using Good = KingsleyHeap<SbrkHeap<>>;

// Hands out the same object twice in a row.
struct OverlappingHeap : Good {
  void* last = nullptr;
  int count = 0;
  void* malloc(std::size_t n) {
    if (++count == 50 && last != nullptr) return last;
    return last = Good::malloc(n);
  }
};

// Returns pointers 8 bytes off its promised 16-byte alignment once.
struct MisalignedHeap : Good {
  int count = 0;
  void* malloc(std::size_t n) {
    void* p = Good::malloc(n + 16);
    return ++count == 30 ? static_cast<char*>(p) + 8 : p;
  }
  void free(void*) {}
};

// Scribbles on a live neighbour when it frees something.
struct ScribblingHeap : Good {
  void* first = nullptr;
  int frees = 0;
  void* malloc(std::size_t n) {
    void* p = Good::malloc(n);
    if (first == nullptr) first = p;
    return p;
  }
  void free(void* p) {
    if (++frees == 100 && first != nullptr && first != p) static_cast<char*>(first)[0] ^= 0x5a;
    Good::free(p);
  }
};

// Claims more usable bytes than it gives.
struct ShortSizeHeap : Good {
  std::size_t getSize(void* p) { return Good::getSize(p) / 4; }
};

TEST(DifferentialHarness, CatchesOverlap) {
  OverlappingHeap h;
  EXPECT_NONFATAL_FAILURE(test::runDifferential(h, {.ops = 1000}), "overlaps live object");
}

TEST(DifferentialHarness, CatchesMisalignment) {
  MisalignedHeap h;
  EXPECT_NONFATAL_FAILURE(test::runDifferential(h, {.ops = 1000}), "-byte aligned");
}

TEST(DifferentialHarness, CatchesLostContents) {
  ScribblingHeap h;
  EXPECT_NONFATAL_FAILURE(test::runDifferential(h, {.ops = 5000, .maxLive = 100000}),
                          "was overwritten");
}

TEST(DifferentialHarness, CatchesShortUsableSize) {
  ShortSizeHeap h;
  EXPECT_NONFATAL_FAILURE(test::runDifferential(h, {.ops = 1000}), "getSize");
}

TEST(DifferentialHarness, CatchesMemoryKeptAfterDestruction) {
  // MallocHeap leaks nothing on its own; a heap that drops objects on the floor does.
  static std::vector<void*> dropped;
  struct Leaky : MallocHeap {
    void free(void* p) { dropped.push_back(p); }
  };
  EXPECT_NONFATAL_FAILURE(test::expectEverythingReturned<Leaky>({.ops = 2000}),
                          "still hold memory");
  MallocHeap cleanup;  // give the dropped objects back so the process account balances
  for (void* p : dropped) cleanup.free(p);
  EXPECT_FALSE(dropped.empty());
}

TEST(DifferentialHarness, CorrectHeapPassesAndStatsAddUp) {
  Good h;
  const auto s = test::runDifferential(h, {.seed = 9, .ops = 100'000, .maxLive = 500});
  EXPECT_EQ(s.mallocs, s.frees);  // everything allocated was freed by the end
  EXPECT_GE(s.mallocs + s.frees, 100'000u);
  EXPECT_GT(s.peakLiveObjects, 250u);
  EXPECT_LE(s.peakLiveObjects, 500u);
}
