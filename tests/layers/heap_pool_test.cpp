// HeapPool: heaps join the pool, orphans are adopted newest first and only once, an orphan
// is listed once however often it is orphaned, a fork child orphans every heap but its own
// and the shared one, and lockAll takes every heap's lock.
#include <gtest/gtest.h>

#include <vector>

#include "strata/detail/spin_lock.hpp"
#include "strata/strata_heap/heap_pool.hpp"

using namespace strata;

namespace {

struct FakeHeap {
  SpinLock lock;
  FakeHeap* nextAll = nullptr;
  FakeHeap* nextOrphan = nullptr;
  bool orphaned = false;
};

std::vector<FakeHeap*> all(HeapPool<FakeHeap>& pool) {
  std::vector<FakeHeap*> v;
  for (FakeHeap* h = pool.first(); h != nullptr; h = h->nextAll) v.push_back(h);
  return v;
}

std::vector<FakeHeap*> orphans(HeapPool<FakeHeap>& pool) {
  std::vector<FakeHeap*> v;
  pool.forEachOrphan([&](FakeHeap* h) { v.push_back(h); });
  return v;
}

}  // namespace

TEST(HeapPool, OrphansAreAdoptedNewestFirstAndOnce) {
  HeapPool<FakeHeap> pool;
  FakeHeap a, b, c;
  for (FakeHeap* h : {&a, &b, &c}) pool.add(h);
  EXPECT_EQ(all(pool), (std::vector<FakeHeap*>{&c, &b, &a}));
  EXPECT_EQ(pool.adopt(), nullptr) << "no orphans yet";
  pool.orphan(&a);
  pool.orphan(&b);
  pool.orphan(&a);  // already an orphan: listed once
  EXPECT_EQ(orphans(pool), (std::vector<FakeHeap*>{&b, &a}));
  EXPECT_EQ(pool.adopt(), &b);
  EXPECT_FALSE(b.orphaned);
  EXPECT_EQ(pool.adopt(), &a);
  EXPECT_EQ(pool.adopt(), nullptr);
  EXPECT_EQ(all(pool).size(), 3u) << "adopting never unlinks a heap";
}

TEST(HeapPool, AForkChildOrphansEveryHeapButItsOwnAndTheShared) {
  HeapPool<FakeHeap> pool;
  FakeHeap mine, shared, other1, other2;
  for (FakeHeap* h : {&mine, &shared, &other1, &other2}) pool.add(h);
  pool.orphan(&other1);
  pool.lockAll();
  for (FakeHeap* h : {&mine, &shared, &other1, &other2}) EXPECT_FALSE(h->lock.try_lock());
  pool.orphanAllBut(&mine, &shared);
  pool.unlockAll();
  for (FakeHeap* h : {&mine, &shared, &other1, &other2}) {
    EXPECT_TRUE(h->lock.try_lock());
    h->lock.unlock();
  }
  EXPECT_EQ(orphans(pool), (std::vector<FakeHeap*>{&other2, &other1}));
  EXPECT_FALSE(mine.orphaned);
  EXPECT_FALSE(shared.orphaned);
}
