// MediumTier inside StrataHeap: memory freed by one medium size serves another (the reason
// for the tier), blocks freed by other threads come back to the owner's regions, aligned
// medium blocks, usable sizes, and trim giving the tier's free memory back.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "strata/general/strata_heap.hpp"

using namespace strata;

namespace {

// Fills n bytes at p with a pattern of seed, and checks it.
void fill(void* p, std::size_t n, unsigned seed) { std::memset(p, static_cast<int>(seed & 0xff), n); }
bool holds(const void* p, std::size_t n, unsigned seed) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < n; i += 97)
    if (b[i] != (seed & 0xff)) return false;
  return b[n - 1] == (seed & 0xff);
}

}  // namespace

// A phase of 600-byte objects, of which one in 50 survives, then a phase of 3,000-byte
// objects of the same total: the second phase fits in the gaps the first one left. With a
// page per size class (before the tier) the survivors pinned every page of the first class,
// and the second phase needed all-new memory (about 20 MiB more).
TEST(MediumTier, MemoryFreedByOneSizeServesAnother) {
  auto h = std::make_unique<StrataHeap>();
  std::vector<void*> first;
  for (int i = 0; i < 32'000; ++i) {  // about 19 MiB
    first.push_back(h->malloc(600));
    fill(first.back(), 600, 1);
  }
  std::vector<void*> survivors;
  for (std::size_t i = 0; i < first.size(); ++i) {
    if (i % 50 == 0) survivors.push_back(first[i]);
    else h->free(first[i]);
  }
  const std::size_t held = h->stats().bytesFromSystem;
  std::vector<void*> second;
  for (int i = 0; i < 6'000; ++i) {  // about 17 MiB
    second.push_back(h->malloc(3000));
    fill(second.back(), 3000, 2);
  }
  const std::size_t grown = h->stats().bytesFromSystem - held;
  EXPECT_LT(grown, std::size_t{4} << 20) << "the second phase reused the first one's gaps";
  for (void* p : survivors) EXPECT_TRUE(holds(p, 600, 1));
  for (void* p : second) EXPECT_TRUE(holds(p, 3000, 2));
  for (void* p : survivors) h->free(p);
  for (void* p : second) h->free(p);
}

// Another thread frees what this one allocated, round after round: the blocks go back to
// this thread's regions and are reused, so the memory held stays at one round's worth.
TEST(MediumTier, BlocksFreedByAnotherThreadAreReused) {
  auto h = std::make_unique<StrataHeap>();
  std::size_t afterFirst = 0;
  for (int round = 0; round < 20; ++round) {
    std::vector<void*> made;
    for (int i = 0; i < 4'000; ++i) {
      const std::size_t n = 512 + static_cast<std::size_t>(i % 97) * 150;
      made.push_back(h->malloc(n));
      fill(made.back(), n, static_cast<unsigned>(round));
    }
    std::thread([&] {
      for (std::size_t i = 0; i < made.size(); ++i) {
        ASSERT_TRUE(holds(made[i], 512 + (i % 97) * 150, static_cast<unsigned>(round)));
        h->free(made[i]);
      }
    }).join();
    if (round == 0) afterFirst = h->stats().bytesFromSystem;
  }
  EXPECT_LE(h->stats().bytesFromSystem, afterFirst + (std::size_t{4} << 20))
      << "rounds after the first reuse the blocks freed by the other thread";
}

// memalign of medium sizes: aligned, usable to the requested size, freed like any block,
// mixed with plain requests in random order.
TEST(MediumTier, AlignedMediumBlocks) {
  auto h = std::make_unique<StrataHeap>();
  std::mt19937 rng(5);
  struct Block {
    void* p;
    std::size_t n;
    unsigned seed;
  };
  std::vector<Block> live;
  for (unsigned i = 0; i < 20'000; ++i) {
    if (live.size() > 300 || (!live.empty() && rng() % 3 == 0)) {
      const std::size_t k = rng() % live.size();
      ASSERT_TRUE(holds(live[k].p, live[k].n, live[k].seed));
      h->free(live[k].p);
      live[k] = live.back();
      live.pop_back();
      continue;
    }
    const std::size_t n = 400 + rng() % 12'000;
    void* p;
    if (rng() % 2 == 0) {
      const std::size_t align = std::size_t{32} << (rng() % 8);  // 32 .. 4096
      p = h->memalign(align, n);
      ASSERT_NE(p, nullptr);
      ASSERT_EQ(reinterpret_cast<std::uintptr_t>(p) % align, 0u) << align;
    } else {
      p = h->malloc(n);
      ASSERT_NE(p, nullptr);
    }
    ASSERT_GE(h->getSize(p), n);
    ASSERT_LT(h->getSize(p), n + n / 8 + 4096 + 64) << "a block's usable size stays near the request";
    fill(p, n, i);
    live.push_back({p, n, i});
  }
  for (Block& b : live) h->free(b.p);
}

// trim gives back the tier's free memory: after freeing all but a few scattered blocks, the
// heap's committed bytes fall to a small part of what they were.
TEST(MediumTier, TrimGivesTheTiersFreeMemoryBack) {
  auto h = std::make_unique<StrataHeap>();
  std::vector<void*> blocks;
  for (int i = 0; i < 20'000; ++i) {
    blocks.push_back(h->malloc(1000 + static_cast<std::size_t>(i % 13) * 500));
    std::memset(blocks.back(), 3, 1000);
  }
  const std::size_t full = h->stats().bytesFromSystem;
  std::vector<void*> kept;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    if (i % 400 == 0) kept.push_back(blocks[i]);
    else h->free(blocks[i]);
  }
  h->trim();
  EXPECT_LT(h->stats().bytesFromSystem, full / 4) << "full " << full;
  for (void* p : kept) h->free(p);
}
