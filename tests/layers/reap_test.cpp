#include "strata/reap/reap.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "strata/detail/poison.hpp"
#include "common/differential.hpp"

using namespace strata;

using R = Reap<>;
static_assert(SizedHeap<R> && ClearableHeap<R> && R::Alignment == 16);

TEST(Reap, RegionModeBumpsWithBoundaryTags) {
  R r;
  auto* a = static_cast<std::byte*>(r.malloc(40));
  auto* b = static_cast<std::byte*>(r.malloc(40));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_FALSE(r.anyFreed());
  EXPECT_EQ(b - a, 48);  // block of 48 (40 + 8-byte tag, rounded to 16), adjacent
  EXPECT_EQ(R::getSize(a), 40u);
  EXPECT_EQ(r.bytesInChunks(), kReapFirstChunk - 16);
}

TEST(Reap, FreedMemoryIsReusedAndCoalesced) {
  // Objects above the quick lists' sizes go straight to the coalescing store.
  static_assert(300 > kReapQuickMax + 8);
  R r;
  void* a = r.malloc(300);
  void* b = r.malloc(300);
  void* c = r.malloc(300);
  ASSERT_TRUE(a && b && c);
  r.free(a);
  r.free(b);  // coalesces with a
  EXPECT_TRUE(r.anyFreed());
  void* d = r.malloc(620);  // the pair's whole 640-byte block: nothing left to split off
  EXPECT_EQ(d, a) << "the freed, coalesced pair should serve a larger request";
  r.free(c);
  void* e = r.malloc(50);
  EXPECT_EQ(e, c) << "a free block is split for a smaller request";
}

TEST(Reap, QuickListsReuseExactSizesAndFlushForLargerRequests) {
  R r;
  void* a = r.malloc(240);
  void* b = r.malloc(240);
  void* c = r.malloc(240);
  void* guard = r.malloc(240);
  ASSERT_TRUE(a && b && c && guard);
  r.free(b);
  EXPECT_EQ(r.malloc(233), b) << "a request of the same usable size takes the parked object";
  r.free(a);
  r.free(b);
  r.free(c);
  EXPECT_FALSE(r.looksLive(a)) << "a parked object is not live";
  EXPECT_FALSE(r.isLive(b));
  EXPECT_TRUE(r.isLive(guard));
  // 600 bytes fit no parked object: the quick lists are flushed into the coalescing store,
  // where a, b and c (3 x 256-byte blocks) merge and serve it.
  EXPECT_EQ(r.malloc(600), a);
}

TEST(Reap, GeometricChunks) {
  R r;
  std::size_t last = 0;
  std::vector<std::size_t> held;
  for (int i = 0; i < 20000; ++i) {
    ASSERT_NE(r.malloc(100), nullptr);
    if (r.bytesInChunks() != last) held.push_back(last = r.bytesInChunks());
  }
  ASSERT_GE(held.size(), 4u);
  EXPECT_EQ(held[0], kReapFirstChunk - 16);
  EXPECT_EQ(held[1] - held[0], 2 * kReapFirstChunk - 16);
  EXPECT_EQ(held[2] - held[1], 4 * kReapFirstChunk - 16);
}

TEST(Reap, LargeObjectsGetTheirOwnChunk) {
  R r;
  void* p = r.malloc(1 << 20);
  ASSERT_NE(p, nullptr);
  std::memset(p, 1, 1 << 20);
  EXPECT_GE(R::getSize(p), std::size_t{1} << 20);
  void* q = r.malloc(16);
  ASSERT_NE(q, nullptr);
}

TEST(Reap, OverflowGivesEnomem) {
  R r;
  errno = 0;
  EXPECT_EQ(r.malloc(SIZE_MAX), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(r.malloc(SIZE_MAX - 20), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  void* p = r.malloc(10);
  errno = 0;
  EXPECT_EQ(r.realloc(p, SIZE_MAX - 8), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_TRUE(r.isLive(p));
}

TEST(Reap, ReallocKeepsContents) {
  R r;
  auto* p = static_cast<char*>(r.malloc(10));
  std::memcpy(p, "abcdefghi", 10);
  auto* q = static_cast<char*>(r.realloc(p, 5000));
  ASSERT_NE(q, nullptr);
  EXPECT_STREQ(q, "abcdefghi");
  EXPECT_EQ(r.realloc(q, 0), nullptr);
  EXPECT_FALSE(r.isLive(q));
}

TEST(Reap, LivenessChecks) {
  R r;
  auto* p = static_cast<std::byte*>(r.malloc(64));
  void* q = r.malloc(64);
  EXPECT_TRUE(r.isLive(p));
  EXPECT_TRUE(r.looksLive(p));
  EXPECT_FALSE(r.isLive(p + 16));
  EXPECT_FALSE(r.isLive(p + 1));
  alignas(16) static std::byte outside[64];
  EXPECT_FALSE(r.isLive(outside + 16));
  EXPECT_FALSE(r.looksLive(outside + 16));
  r.free(p);
  EXPECT_FALSE(r.isLive(p));
  EXPECT_FALSE(r.looksLive(p));
  EXPECT_TRUE(r.isLive(q));
  R other;
  EXPECT_FALSE(other.isLive(q));
  EXPECT_FALSE(other.looksLive(q));
}

TEST(Reap, DifferentialWithClear) {
  for (auto sizes : {test::SizeMix::Small, test::SizeMix::Mixed}) {
    test::DiffConfig cfg;
    cfg.sizes = sizes;
    cfg.ops = detail::kAsan ? 150'000 : 600'000;
    cfg.maxLive = 2000;
    cfg.useClear = true;
    const auto stats = test::expectEverythingReturned<R>(cfg);
    EXPECT_GT(stats.clears, 0u);
    EXPECT_GT(stats.frees, 0u);
  }
}

TEST(Reap, DestroyReturnsEveryByte) {
  const std::size_t before = processAccount().held();
  {
    R r;
    std::vector<void*> v;
    for (int i = 0; i < 10000; ++i) v.push_back(r.malloc(16 + i % 3000));
    for (std::size_t i = 0; i < v.size(); i += 2) r.free(v[i]);
    R* c = r.createChild();
    ASSERT_NE(c, nullptr);
    for (int i = 0; i < 5000; ++i) c->malloc(100);
    r.clear();
    for (int i = 0; i < 1000; ++i) r.malloc(i);
    EXPECT_GT(processAccount().held(), before);
  }
  EXPECT_EQ(processAccount().held(), before);
}

TEST(Reap, NestingClearDestroysChildren) {
  R root;
  int destroyed = 0;
  auto count = +[](void* arg) { ++*static_cast<int*>(arg); };
  R* a = root.createChild();
  R* b = root.createChild();
  R* aa = a->createChild();
  ASSERT_TRUE(a && b && aa);
  EXPECT_EQ(a->parent(), &root);
  EXPECT_EQ(aa->parent(), a);
  EXPECT_EQ(root.firstChild(), b);
  for (R* x : {a, b, aa}) {
    ASSERT_TRUE(x->addCleanup(count, &destroyed));
    ASSERT_NE(x->malloc(1000), nullptr);
  }
  root.destroyChild(a);  // takes aa with it
  EXPECT_EQ(destroyed, 2);
  EXPECT_EQ(root.firstChild(), b);
  EXPECT_EQ(b->nextSibling(), nullptr);
  root.clear();
  EXPECT_EQ(destroyed, 3);
  EXPECT_EQ(root.firstChild(), nullptr);
  R* c = root.createChild();
  ASSERT_NE(c, nullptr);
  c->addCleanup(count, &destroyed);
  {
    R* d = c->createChild();
    d->addCleanup(count, &destroyed);
  }
  // root's destructor destroys c and d
}

TEST(Reap, CleanupsRunNewestFirstOnClearAndDestroy) {
  std::vector<int> order;
  struct Rec {
    std::vector<int>* v;
    int n;
  };
  auto push = +[](void* a) {
    auto* r = static_cast<Rec*>(a);
    r->v->push_back(r->n);
  };
  Rec r1{&order, 1}, r2{&order, 2}, r3{&order, 3};
  {
    R r;
    r.addCleanup(push, &r1);
    r.addCleanup(push, &r2);
    r.clear();
    EXPECT_EQ(order, (std::vector<int>{2, 1}));
    r.clear();
    EXPECT_EQ(order.size(), 2u) << "cleanups run once";
    r.addCleanup(push, &r3);
  }
  EXPECT_EQ(order, (std::vector<int>{2, 1, 3}));
}

namespace {
struct Tracked {
  static inline int live = 0;
  std::string name;
  explicit Tracked(std::string n) : name(std::move(n)) { ++live; }
  ~Tracked() { --live; }
};
struct Throws {
  Throws() { throw 42; }
  ~Throws() {}
};
struct Plain {
  int x, y;
};
}  // namespace

TEST(Reap, MakeConstructsAndDestroys) {
  {
    R r;
    Tracked* t = r.make<Tracked>("a long string that does not fit the small buffer");
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(Tracked::live, 1);
    EXPECT_EQ(t->name.size(), 48u);
    r.make<Tracked>("b");
    EXPECT_EQ(Tracked::live, 2);
    r.clear();
    EXPECT_EQ(Tracked::live, 0);
    r.make<Tracked>("c");
    Plain* p = r.make<Plain>(Plain{3, 4});
    EXPECT_EQ(p->y, 4);
    EXPECT_THROW(r.make<Throws>(), int);
    EXPECT_EQ(Tracked::live, 1);
  }
  EXPECT_EQ(Tracked::live, 0);
}

// A producer-consumer pattern: objects are freed in FIFO order, a few thousand behind the
// producer. The reap reuses freed memory and stays near the live size; a region whose free
// does nothing grows with the total allocated.
TEST(Reap, ProducerConsumerStaysBounded) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::size_t> size(64, 1024);
  const int total = detail::kAsan ? 150'000 : 400'000;
  const std::size_t window = 8000;

  R reap;
  RegionHeap<MallocHeap> region;
  std::deque<std::pair<void*, std::size_t>> reapQ, regionQ;
  std::size_t live = 0, peakLive = 0, regionBytes = 0, regionAtWindow = 0;
  for (int i = 0; i < total; ++i) {
    const std::size_t n = size(rng);
    void* p = reap.malloc(n);
    void* q = region.malloc(n);
    ASSERT_TRUE(p && q);
    std::memset(p, 1, n);
    reapQ.emplace_back(p, n);
    regionQ.emplace_back(q, n);
    live += n;
    regionBytes += n;
    peakLive = std::max(peakLive, live);
    if (reapQ.size() > window) {
      reap.free(reapQ.front().first);
      live -= reapQ.front().second;
      reapQ.pop_front();
      region.free(regionQ.front().first);
      regionQ.pop_front();
    }
    if (i == static_cast<int>(window)) regionAtWindow = regionBytes;
  }
  const double ratio = double(reap.bytesInChunks()) / double(peakLive);
  RecordProperty("reap_over_peak_live", std::to_string(ratio));
  EXPECT_LE(ratio, 1.25) << "reap holds " << reap.bytesInChunks() << " for peak live "
                         << peakLive;
  // The region holds everything ever allocated: many times the live set.
  EXPECT_GT(regionBytes, 10 * peakLive);
  EXPECT_GT(regionBytes, 10 * regionAtWindow);
}

#if defined(STRATA_ASAN)
TEST(ReapDeathTest, UseAfterClearIsReported) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        R r;
        auto* p = static_cast<volatile char*>(r.malloc(100));
        p[0] = 1;
        r.clear();
        p[0] = 2;
      },
      "use-after-free|use-after-poison");
}

TEST(ReapDeathTest, UseAfterFreeIsReported) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        R r;
        auto* p = static_cast<volatile char*>(r.malloc(100));
        r.malloc(100);
        r.free(const_cast<char*>(p));
        p[40] = 2;
      },
      "use-after-poison");
}

// 100 bytes above went to a quick list; 400 go to the coalescing store's bins.
TEST(ReapDeathTest, UseAfterFreeOfABinnedObjectIsReported) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        R r;
        auto* p = static_cast<volatile char*>(r.malloc(400));
        r.malloc(100);
        r.free(const_cast<char*>(p));
        p[200] = 2;
      },
      "use-after-poison");
}

TEST(ReapDeathTest, BumpSpaceIsPoisoned) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        R r;
        auto* p = static_cast<volatile char*>(r.malloc(100));
        p[200] = 2;
      },
      "use-after-poison");
}
#endif

// The chunk cache: a child's chunks go to its tree's cache when it is destroyed, and the
// next child reuses them without asking malloc; trimCache gives them all back.
TEST(ReapChunkCache, ChildrenReuseCachedChunks) {
  const std::size_t before = processAccount().held();
  {
    R root;
    auto fill = [&] {
      R* c = root.createChild();
      ASSERT_NE(c, nullptr);
      for (int i = 0; i < 20000; ++i) ASSERT_NE(c->malloc(16 + i % 200), nullptr);
      root.destroyChild(c);
    };
    fill();
    const std::size_t cached = root.cachedBytes();
    EXPECT_GT(cached, std::size_t{1} << 20);
    const std::size_t held = processAccount().held();
    fill();
    EXPECT_EQ(processAccount().held(), held) << "the second child should reuse every chunk";
    EXPECT_EQ(root.cachedBytes(), cached);
    root.trimCache();
    EXPECT_EQ(root.cachedBytes(), 0u);
    fill();
    root.clear();  // the root's own chunks go to the cache too
    EXPECT_GT(root.cachedBytes(), 0u);
  }
  EXPECT_EQ(processAccount().held(), before) << "destroying the root empties the cache";
}

TEST(ReapChunkCache, StaysBounded) {
  R root;
  root.setCacheLimit(std::size_t{256} << 10);
  std::mt19937_64 rng(3);
  for (int round = 0; round < 30; ++round) {
    R* c = root.createChild();
    ASSERT_NE(c, nullptr);
    const int n = 1000 + static_cast<int>(rng() % 20000);
    for (int i = 0; i < n; ++i) ASSERT_NE(c->malloc(8 + rng() % 3000), nullptr);
    root.destroyChild(c);
    EXPECT_LE(root.cachedBytes(), std::size_t{256} << 10);
  }
  root.setCacheLimit(0);
  EXPECT_EQ(root.cachedBytes(), 0u);
  R* c = root.createChild();
  for (int i = 0; i < 5000; ++i) c->malloc(100);
  root.destroyChild(c);
  EXPECT_EQ(root.cachedBytes(), 0u) << "limit 0: nothing is cached";
}

// Total held by a tree (chunks in use + cached) never exceeds the peak of chunks in use.
TEST(ReapChunkCache, HeldNeverExceedsPeakInUse) {
  R root;
  std::size_t peak = 0;
  std::mt19937_64 rng(5);
  for (int round = 0; round < 40; ++round) {
    R* c = root.createChild();
    ASSERT_NE(c, nullptr);
    const int n = 100 + static_cast<int>(rng() % 30000);
    const std::size_t big = rng() % 4 == 0 ? 100000 + rng() % 400000 : 0;
    if (big != 0) {
      ASSERT_NE(c->malloc(big), nullptr);
    }
    for (int i = 0; i < n; ++i) ASSERT_NE(c->malloc(8 + rng() % 500), nullptr);
    peak = std::max(peak, root.treeChunksInUse());
    EXPECT_LE(root.treeChunksInUse() + root.cachedBytes(), peak + (std::size_t{1} << 20));
    root.destroyChild(c);
    EXPECT_LE(root.cachedBytes(), peak);
  }
}

#if defined(STRATA_ASAN)
TEST(ReapDeathTest, CachedChunkIsPoisoned) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        R root;
        R* c = root.createChild();
        auto* p = static_cast<volatile char*>(c->malloc(100));
        root.destroyChild(c);
        p[0] = 2;
      },
      "use-after-poison");
}
#endif

// Creating and destroying children is cheap: a destroyed child's storage is kept by its
// parent for the next child (the parent never frees, so it stays in region mode and never
// builds its free store), and the children's first chunks cycle through the tree's cache.
TEST(Reap, ChildrenReuseStorageAndLeaveParentInRegionMode) {
  R root;
  R* a = root.createChild();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(a->malloc(100), nullptr);
  root.destroyChild(a);
  EXPECT_FALSE(root.anyFreed());
  R* b = root.createChild();
  EXPECT_EQ(b, a) << "the next child is built in the destroyed one's storage";
  EXPECT_EQ(b->firstChild(), nullptr);
  EXPECT_EQ(b->bytesInChunks(), 0u);
  EXPECT_FALSE(b->anyFreed());
  void* p = b->malloc(100);
  ASSERT_NE(p, nullptr);
  b->free(p);  // the child's store is built now, on its first free
  EXPECT_TRUE(b->anyFreed());
  EXPECT_EQ(b->malloc(100), p);
  R* c = b->createChild();
  ASSERT_NE(c, nullptr);
  ASSERT_NE(c->malloc(50), nullptr);
  root.clear();  // destroys b (and c), drops the spares
  EXPECT_EQ(root.firstChild(), nullptr);
  EXPECT_EQ(root.treeChunksInUse(), 0u);
  R* d = root.createChild();
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->malloc(10), nullptr);
}

TEST(Reap, ManyChildrenStayCheap) {
  const std::size_t before = processAccount().held();
  {
    R root;
    std::vector<R*> stack{&root};
    std::mt19937 rng(7);
    for (int s = 0; s < 20000; ++s) {
      if (stack.size() == 1 || (stack.size() < 40 && rng() % 100 < 52)) {
        R* c = stack.back()->createChild();
        ASSERT_NE(c, nullptr);
        for (unsigned k = 1 + rng() % 8; k > 0; --k) {
          void* p = c->malloc(8 + rng() % 256);
          ASSERT_NE(p, nullptr);
          if (rng() % 4 == 0) c->free(p);
        }
        stack.push_back(c);
      } else {
        R* c = stack.back();
        stack.pop_back();
        stack.back()->destroyChild(c);
        EXPECT_FALSE(stack.back()->anyFreed() && stack.size() == 1);
      }
    }
    // Chunks in use stay bounded by the depth, not the number of children made.
    EXPECT_LE(root.treeChunksInUse(), 41 * (2 * kReapFirstChunk));
  }
  EXPECT_EQ(processAccount().held(), before);
}
