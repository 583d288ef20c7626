#include "strata/special/xalloc_heap.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "strata/top/malloc_heap.hpp"
#include "strata/top/mmap_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "common/counting_heap.hpp"
#include "common/differential.hpp"

using namespace strata;

using Counted = test::CountingHeap<MallocHeap>;
using X4k = XallocHeap<4096, Counted>;
using X256 = XallocHeap<256, Counted>;
static_assert(SizedHeap<X4k> && ClearableHeap<X4k> && AccountedHeap<XallocHeap<4096, MallocHeap>>);
static_assert(!ContiguousHeap<X4k>, "single frees do give memory back");
static_assert(X4k::Alignment == 16);

namespace {
std::byte* at(void* p) { return static_cast<std::byte*>(p); }
}  // namespace

TEST(XallocHeap, LayoutIsHeaderThenRoundedObject) {
  X4k x;
  void* p1 = x.malloc(1);
  ASSERT_EQ(x.outstanding.size(), 1u);
  std::byte* chunk = at(*x.outstanding.begin());
  EXPECT_EQ(x.lastRequest, 4096u);
  EXPECT_EQ(p1, chunk + X4k::ChunkHeaderSize + X4k::BlockHeaderSize);
  EXPECT_EQ(X4k::getSize(p1), 16u);
  EXPECT_EQ(x.bumpPointer(), at(p1) + 16);
  void* p2 = x.malloc(20);
  EXPECT_EQ(p2, at(p1) + 32);
  EXPECT_EQ(X4k::getSize(p2), 32u);
  EXPECT_EQ(x.bumpPointer(), at(p2) + 32);
  void* p3 = x.malloc(0);
  EXPECT_EQ(p3, at(p2) + 48);
  EXPECT_EQ(X4k::getSize(p3), 16u);
  EXPECT_EQ(x.bumpPointer(), at(p3) + 16);
}

TEST(XallocHeap, FreeingTheLastBlockPullsBackPastFreedOnes) {
  X4k x;
  void* p1 = x.malloc(1);
  void* p2 = x.malloc(20);
  void* p3 = x.malloc(100);
  void* p4 = x.malloc(7);
  void* const top = x.bumpPointer();
  x.free(p2);  // not last: only marked
  EXPECT_EQ(x.bumpPointer(), top);
  x.free(p4);  // last: back to the end of p3
  EXPECT_EQ(x.bumpPointer(), at(p3) + 112);
  x.free(p3);  // last, and p2 below it is free too: back to the end of p1
  EXPECT_EQ(x.bumpPointer(), at(p1) + 16);
  EXPECT_EQ(x.malloc(20), p2) << "the space is reused at once";
  x.free(p2);
  x.free(p1);
  EXPECT_EQ(x.bumpPointer(), at(p1) - 16) << "everything freed: the bump pointer is at the base";
  EXPECT_EQ(x.chunks(), 1u);
  EXPECT_EQ(x.malloc(1), p1);
}

TEST(XallocHeap, DoubleFreeAndNullAreIgnored) {
  X4k x;
  void* a = x.malloc(10);
  void* b = x.malloc(10);
  x.free(a);
  x.free(a);
  x.free(nullptr);
  EXPECT_EQ(x.bumpPointer(), at(b) + 16);
  x.free(b);
  EXPECT_EQ(x.bumpPointer(), at(a) - 16);
}

TEST(XallocHeap, ChunksArePushedAndPoppedWithOneCached) {
  X256 x;  // 224 bytes of blocks per chunk
  void* a = x.malloc(48);  // 64-byte blocks
  void* b = x.malloc(48);
  void* c = x.malloc(48);
  void* d = x.malloc(16);  // the last 32 bytes: fills the chunk exactly
  EXPECT_EQ(b, at(a) + 64);
  EXPECT_EQ(c, at(b) + 64);
  EXPECT_EQ(d, at(c) + 64);
  EXPECT_EQ(x.chunks(), 1u);
  EXPECT_EQ(x.bumpPointer(), at(*x.outstanding.begin()) + 256);
  void* e = x.malloc(1);
  EXPECT_EQ(x.chunks(), 2u);
  EXPECT_EQ(x.live(), 2u);
  x.free(d);  // below e: only marked
  x.free(e);  // the top chunk empties and is cached; unwinding goes on past d below
  EXPECT_EQ(x.chunks(), 1u);
  EXPECT_TRUE(x.hasCachedChunk());
  EXPECT_EQ(x.live(), 2u);
  EXPECT_EQ(x.bumpPointer(), at(c) + 48);
  EXPECT_EQ(x.malloc(1), d);
  void* f = x.malloc(200);  // needs a new chunk again: the cached one, no parent call
  EXPECT_EQ(x.mallocs, 2u);
  EXPECT_FALSE(x.hasCachedChunk());
  EXPECT_EQ(f, e);
  x.free(f);
  x.free(d);
  x.free(c);
  x.free(b);
  x.free(a);
  // The bottom chunk stays, empty; it is the one idle chunk, so the cached one went back.
  EXPECT_EQ(x.chunks(), 1u);
  EXPECT_FALSE(x.hasCachedChunk());
  EXPECT_EQ(x.live(), 1u);
  EXPECT_EQ(x.bumpPointer(), at(a) - 16);
  EXPECT_EQ(x.strays, 0u);
}

TEST(XallocHeap, BigRequestsGetTheirOwnChunkAndGoBackAtOnce) {
  X256 x;
  void* a = x.malloc(1);
  void* big = x.malloc(1000);  // block 16 + 1008 = 1024, chunk 32 + 1024
  EXPECT_EQ(x.lastRequest, 1056u);
  EXPECT_EQ(X256::getSize(big), 1008u);
  EXPECT_EQ(x.bumpPointer(), at(big) + 1008);
  EXPECT_EQ(x.chunks(), 2u);
  void* s = x.malloc(1);  // the big chunk is full: a plain chunk on top
  EXPECT_EQ(x.chunks(), 3u);
  x.free(s);
  EXPECT_TRUE(x.hasCachedChunk());
  EXPECT_EQ(x.bumpPointer(), at(big) + 1008);
  x.free(big);  // not a plain chunk: straight back to the parent
  EXPECT_EQ(x.live(), 2u);  // the bottom chunk and the cached one
  EXPECT_EQ(x.bumpPointer(), at(a) + 16);
  EXPECT_EQ(x.chunks(), 1u);
}

TEST(XallocHeap, ClearKeepsOneCachedChunk) {
  X256 x;
  std::vector<void*> ps;
  for (int i = 0; i < 40; ++i) ps.push_back(x.malloc(100));
  x.malloc(5000);
  EXPECT_GT(x.chunks(), 10u);
  x.clear();
  EXPECT_EQ(x.chunks(), 0u);
  EXPECT_EQ(x.bumpPointer(), nullptr);
  EXPECT_TRUE(x.hasCachedChunk());
  ASSERT_EQ(x.live(), 1u);
  std::byte* cached = at(*x.outstanding.begin());
  const std::size_t mallocs = x.mallocs;
  EXPECT_EQ(x.malloc(3), cached + 48);
  EXPECT_EQ(x.mallocs, mallocs);
}

TEST(XallocHeap, DestructorReturnsEverything) {
  const std::size_t before = processAccount().held();
  {
    XallocHeap<4096, MmapHeap> x;
    for (int i = 0; i < 2000; ++i) x.malloc(i % 300 + 1);
    x.malloc(1 << 20);
    EXPECT_GT(processAccount().held(), before);
  }
  EXPECT_EQ(processAccount().held(), before);
}

TEST(XallocHeap, HugeRequestsAreNull) {
  XallocHeap<4096, SbrkHeap<(std::size_t{1} << 30)>> x;
  XallocHeap<4096, MmapHeap> m;
  for (std::size_t n : {SIZE_MAX, SIZE_MAX - 15, SIZE_MAX - 16, SIZE_MAX - 47, SIZE_MAX - 64,
                        std::size_t{1} << 62, std::size_t{1} << 50, std::size_t{1} << 31}) {
    errno = 0;
    EXPECT_EQ(x.malloc(n), nullptr) << n;
    EXPECT_EQ(errno, ENOMEM) << n;
    if (n >= (std::size_t{1} << 50)) {
      errno = 0;
      EXPECT_EQ(m.malloc(n), nullptr) << n;
      EXPECT_EQ(errno, ENOMEM) << n;
    }
  }
  EXPECT_EQ(x.chunks(), 0u);
  void* p = x.malloc(16);
  ASSERT_NE(p, nullptr);
  x.free(p);
}

// A LIFO-biased random sequence: most frees take the newest live object, some a random one.
// After every step the bump pointer must sit exactly at the end of the newest live object
// (every freed block above it has been popped), and when nothing is live it must be back at
// the base of the bottom chunk. Contents are checked at every free.
TEST(XallocHeap, LifoBiasedRandomSequenceUnwindsToTheBase) {
  XallocHeap<8192, Counted> x;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  struct Obj {
    void* p;
    std::size_t n;
    unsigned char tag;
  };
  std::vector<Obj> live;  // in allocation order
  void* first = x.malloc(8);
  std::byte* const base = at(first) - 16;
  x.free(first);
  ASSERT_EQ(x.bumpPointer(), base);
  unsigned tagCounter = 0;
  std::size_t empties = 0, maxChunks = 0;
  auto freeAt = [&](std::size_t i) {
    std::size_t bad = 0;
    ASSERT_TRUE(test::checkTag(live[i].p, live[i].n, live[i].tag, bad)) << "offset " << bad;
    x.free(live[i].p);
    live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
  };
  auto checkBump = [&] {
    if (live.empty()) {
      ASSERT_EQ(x.bumpPointer(), base);
      ASSERT_EQ(x.chunks(), 1u);
      ASSERT_FALSE(x.hasCachedChunk());
      ++empties;
    } else {
      ASSERT_EQ(x.bumpPointer(), at(live.back().p) + x.getSize(live.back().p));
    }
  };
  for (int op = 0; op < 400'000; ++op) {
    const bool growing = (op / 4000) % 2 == 0;
    if (live.empty() || unit(rng) < (growing ? 0.6 : 0.3)) {
      const double r = unit(rng);
      const std::size_t n = r < 0.97 ? std::uniform_int_distribution<std::size_t>(0, 600)(rng)
                                     : std::uniform_int_distribution<std::size_t>(4000, 30000)(rng);
      void* p = x.malloc(n);
      ASSERT_NE(p, nullptr);
      ASSERT_TRUE(detail::is_aligned(p, 16));
      ASSERT_GE(x.getSize(p), n);
      const auto tag = static_cast<unsigned char>(++tagCounter | 1);
      test::fillTag(p, n, tag);
      live.push_back({p, n, tag});
    } else if (unit(rng) < 0.85) {
      freeAt(live.size() - 1);
    } else {
      freeAt(std::uniform_int_distribution<std::size_t>(0, live.size() - 1)(rng));
    }
    checkBump();
    maxChunks = std::max(maxChunks, x.chunks());
  }
  std::shuffle(live.begin(), live.end(), rng);
  while (!live.empty()) freeAt(live.size() - 1);
  checkBump();
  EXPECT_GT(empties, 10u) << "the sequence should empty the heap several times";
  EXPECT_GT(maxChunks, 3u) << "the sequence should span several chunks";
  EXPECT_EQ(x.live(), 1u) << "only the bottom chunk is held once everything is freed";
  EXPECT_EQ(x.strays, 0u);
}

TEST(XallocHeap, DifferentialMixed) {
  test::expectEverythingReturned<XallocHeap<65536, MallocHeap>>(
      {.seed = 21, .ops = 300'000, .maxLive = 1000});
}

TEST(XallocHeap, DifferentialSmallWithClear) {
  const auto stats = test::expectEverythingReturned<XallocHeap<16384, MmapHeap>>(
      {.seed = 22, .ops = 1'000'000, .maxLive = 4000, .sizes = test::SizeMix::Small,
       .useClear = true});
  EXPECT_GT(stats.clears, 0u);
}

#ifdef STRATA_ASAN
// Built with AddressSanitizer: freed objects and the space above the bump pointer are
// poisoned.
TEST(XallocHeapDeathTest, UseOfAFreedBlockIsReported) {
  XallocHeap<4096, MallocHeap> x;
  auto* a = static_cast<volatile char*>(x.malloc(32));
  auto* b = static_cast<volatile char*>(x.malloc(32));
  a[0] = 1;
  b[0] = 1;
  x.free(const_cast<char*>(a));  // only marked: b is above it
  EXPECT_DEATH((void)a[0], "use-after-poison");
  x.free(const_cast<char*>(b));  // popped
  EXPECT_DEATH((void)b[0], "use-after-poison");
}

TEST(XallocHeapDeathTest, ReadAfterClearIsReported) {
  XallocHeap<4096, MallocHeap> x;
  auto* p = static_cast<volatile char*>(x.malloc(64));
  p[0] = 1;
  x.clear();
  EXPECT_DEATH((void)p[0], "use-after-poison");
}
#endif
