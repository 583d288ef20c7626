// MediumTier inside StrataHeap: memory freed by one medium size serves another (the reason
// for the tier), blocks freed by other threads come back to the owner's regions, a quiet
// thread's freed memory serves others, aligned medium blocks, usable sizes, and trim giving
// the tier's free memory back.
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
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

// Allocates `count` objects of `first` bytes, frees all but one in `keepEvery`, then
// allocates `secondCount` objects of `second` bytes; checks every survivor's and new
// object's contents and frees them. Returns how many bytes the heap took from the system
// for the second phase.
static std::size_t secondPhaseGrowth(StrataHeap& h, std::size_t first, int count, std::size_t keepEvery,
                              std::size_t second, int secondCount) {
  std::vector<void*> made;
  for (int i = 0; i < count; ++i) {
    made.push_back(h.malloc(first));
    fill(made.back(), first, 1);
  }
  std::vector<void*> survivors;
  for (std::size_t i = 0; i < made.size(); ++i) {
    if (i % keepEvery == 0) survivors.push_back(made[i]);
    else h.free(made[i]);
  }
  const std::size_t held = h.stats().bytesFromSystem;
  std::vector<void*> next;
  for (int i = 0; i < secondCount; ++i) {
    next.push_back(h.malloc(second));
    fill(next.back(), second, 2);
  }
  const std::size_t grown = h.stats().bytesFromSystem - held;
  for (void* p : survivors) EXPECT_TRUE(holds(p, first, 1));
  for (void* p : next) EXPECT_TRUE(holds(p, second, 2));
  for (void* p : survivors) h.free(p);
  for (void* p : next) h.free(p);
  return grown;
}

// A phase of 600-byte objects, of which one in 50 survives, then a phase of 3,000-byte
// objects of the same total: the second phase fits in the gaps the first one left. With a
// page per size class (before the tier) the survivors pinned every page of the first class,
// and the second phase needed all-new memory (about 20 MiB more).
TEST(MediumTier, MemoryFreedByOneSizeServesAnother) {
  auto h = std::make_unique<StrataHeap>();
  EXPECT_LT(secondPhaseGrowth(*h, 600, 32'000, 50, 3000, 6'000), std::size_t{4} << 20)  // 19, 17 MiB
      << "the second phase reused the first one's gaps";
}

// The same for the tier's smallest classes (from 128 B): a phase of 160-byte objects with
// one survivor in 40, then 448-byte objects in the gaps. In pages of their class (before
// the tier reached down to 128 B) the second phase took about 10 MiB more.
TEST(MediumTier, SmallMediumSizesShareFreedMemory) {
  auto h = std::make_unique<StrataHeap>();
  EXPECT_LT(secondPhaseGrowth(*h, 160, 80'000, 40, 448, 24'000), std::size_t{3} << 20)  // 12, 10 MiB
      << "the second phase reused the first one's gaps";
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

// A thread that frees everything it allocated and then goes quiet (alive, making no more
// calls) leaves its memory to other threads: once its regions hold more free memory than
// their allowance, its caches (which would keep a block in most of its regions) are
// emptied, its regions go back as they empty, and its empty segments pass on. Another
// thread then allocates as much again without taking more from the system. Before the
// tier shed its own free memory, the quiet thread kept nearly all of it.
TEST(MediumTier, AQuietThreadsFreedMemoryServesOthers) {
  auto h = std::make_unique<StrataHeap>();
  std::mutex m;
  std::condition_variable cv;
  bool freed = false, done = false;
  auto sizeOf = [](std::mt19937& rng) { return 512 + static_cast<std::size_t>(rng() % 1024); };
  std::thread quiet([&] {
    std::mt19937 rng(11);
    std::vector<void*> made;
    for (int i = 0; i < 16'000; ++i) {  // about 16 MiB
      made.push_back(h->malloc(sizeOf(rng)));
      std::memset(made.back(), 1, 512);
    }
    std::shuffle(made.begin(), made.end(), rng);
    for (void* p : made) h->free(p);
    std::unique_lock<std::mutex> lock(m);
    freed = true;
    cv.notify_all();
    cv.wait(lock, [&] { return done; });
  });
  {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return freed; });
  }
  const std::size_t before = h->stats().bytesFromSystem;
  std::mt19937 rng(12);
  std::vector<void*> made;
  for (int i = 0; i < 16'000; ++i) {
    made.push_back(h->malloc(sizeOf(rng)));
    std::memset(made.back(), 2, 512);
  }
  const std::size_t grown = h->stats().bytesFromSystem - before;
  EXPECT_LT(grown, std::size_t{4} << 20) << "the quiet thread's memory was reused";
  for (void* p : made) h->free(p);
  {
    std::lock_guard<std::mutex> lock(m);
    done = true;
  }
  cv.notify_all();
  quiet.join();
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
