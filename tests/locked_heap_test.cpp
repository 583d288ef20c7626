#include "strata/utility/locked_heap.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "strata/general/kingsley_heap.hpp"
#include "strata/representation/size_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/utility/ansi_wrapper.hpp"
#include "support/differential.hpp"

using namespace strata;

using Top = SbrkHeap<std::size_t{1} << 32>;
using SharedKingsley = LockedHeap<SpinLock, KingsleyHeap<Top>>;

static_assert(SizedHeap<SharedKingsley> && ClearableHeap<SharedKingsley> &&
              AccountedHeap<SharedKingsley> && SharedKingsley::Alignment == 16);
static_assert(!SizedHeap<LockedHeap<SpinLock, Top>> && ClearableHeap<LockedHeap<SpinLock, Top>>);
static_assert(!ClearableHeap<LockedHeap<std::mutex, MallocHeap>>);
static_assert(std::is_same_v<SpinLockedHeap<MallocHeap>, LockedHeap<DefaultLock, MallocHeap>>);
static_assert(!std::is_copy_constructible_v<SharedKingsley>);

namespace {

// Counts how often any heap takes and drops its lock (the tests using it are single-threaded).
struct CountingLock {
  void lock() { ++locks; }
  void unlock() { ++unlocks; }
  static inline int locks = 0, unlocks = 0;
};

// ---- Cross-thread stress: Threads threads, ops in total, objects freed by their own thread
// or sent through a queue to another thread; every object's contents are checked at free.
struct Obj {
  void* p;
  std::size_t n;
  std::uint64_t tag;
};

void fill(const Obj& o) {
  std::memset(o.p, static_cast<int>(o.tag & 0xff) | 1, o.n);
  if (o.n >= 8) std::memcpy(o.p, &o.tag, 8);
}

bool intact(const Obj& o) {
  std::uint64_t head = o.tag;
  if (o.n >= 8) std::memcpy(&head, o.p, 8);
  std::size_t bad = 0;
  const std::size_t skip = o.n >= 8 ? 8 : 0;
  return head == o.tag && test::checkTag(static_cast<char*>(o.p) + skip, o.n - skip,
                                         static_cast<unsigned char>((o.tag & 0xff) | 1), bad);
}

template <class H>
void crossThreadStress(H& heap, unsigned threads, std::size_t ops, std::uint64_t seed) {
  struct Inbox {
    std::mutex m;
    std::vector<Obj> items;
  };
  std::vector<Inbox> inbox(threads);
  std::atomic<std::size_t> errors{0}, frees{0}, mallocs{0};
  std::atomic<unsigned> finished{0};

  auto release = [&](const Obj& o) {
    if (!intact(o) || !detail::is_aligned(o.p, H::Alignment)) ++errors;
    heap.free(o.p);
    ++frees;
  };
  auto drain = [&](unsigned t) {
    std::vector<Obj> got;
    {
      std::lock_guard<std::mutex> g(inbox[t].m);
      got.swap(inbox[t].items);
    }
    for (const Obj& o : got) release(o);
  };
  auto worker = [&](unsigned t) {
    std::mt19937_64 rng(seed * 131 + t);
    std::vector<Obj> live;
    std::uint64_t counter = 0;
    for (std::size_t i = 0; i < ops / threads; ++i) {
      const unsigned r = rng() % 100;
      if (live.empty() || (r < 50 && live.size() < 2000)) {
        const std::size_t n = (rng() % 16 == 0) ? 1 + rng() % 16384 : 1 + rng() % 256;
        Obj o{heap.malloc(n), n, (std::uint64_t{t} << 56) | ++counter};
        if (o.p == nullptr) {
          ++errors;
          continue;
        }
        ++mallocs;
        fill(o);
        live.push_back(o);
        continue;
      }
      const std::size_t k = rng() % live.size();
      const Obj o = live[k];
      live[k] = live.back();
      live.pop_back();
      if (r < 75) {
        release(o);
      } else {
        const unsigned to = (t + 1 + static_cast<unsigned>(rng() % (threads - 1))) % threads;
        std::lock_guard<std::mutex> g(inbox[to].m);
        inbox[to].items.push_back(o);
      }
      if (i % 64 == 0) drain(t);
    }
    for (const Obj& o : live) release(o);
    ++finished;
    while (finished.load() < threads) {
      drain(t);
      std::this_thread::yield();
    }
    drain(t);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker, t);
  for (auto& th : pool) th.join();
  EXPECT_EQ(errors.load(), 0u) << "objects were lost, misaligned or overwritten";
  EXPECT_EQ(mallocs.load(), frees.load());
  EXPECT_GT(mallocs.load(), ops / 4);
}

}  // namespace

TEST(SpinLock, ExcludesAndTries) {
  SpinLock lock;
  std::size_t counter = 0;
  std::vector<std::thread> pool;
  for (int t = 0; t < 4; ++t)
    pool.emplace_back([&] {
      for (int i = 0; i < 100000; ++i) {
        std::lock_guard<SpinLock> g(lock);
        ++counter;
      }
    });
  for (auto& th : pool) th.join();
  EXPECT_EQ(counter, 400000u);
  ASSERT_TRUE(lock.try_lock());
  EXPECT_FALSE(lock.try_lock());
  lock.unlock();
  EXPECT_TRUE(lock.try_lock());
  lock.unlock();
}

TEST(LockedHeap, EveryCallTakesAndDropsTheLock) {
  LockedHeap<CountingLock, SizeHeap<MallocHeap>> h;
  CountingLock::locks = CountingLock::unlocks = 0;
  void* p = h.malloc(40);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(CountingLock::locks, 1);
  EXPECT_GE(h.getSize(p), 40u);
  EXPECT_EQ(CountingLock::locks, 2);
  h.free(p);
  EXPECT_EQ(CountingLock::locks, 3);
  h.free(nullptr);  // does nothing, not even lock
  EXPECT_EQ(CountingLock::locks, 3);
  EXPECT_EQ(CountingLock::unlocks, 3);
}

TEST(LockedHeap, ClearIsLocked) {
  LockedHeap<CountingLock, Top> h;
  CountingLock::locks = CountingLock::unlocks = 0;
  ASSERT_NE(h.malloc(100), nullptr);
  EXPECT_GT(h.bytesHeld(), 0u);
  h.clear();
  EXPECT_EQ(h.bytesHeld(), 0u);
  EXPECT_EQ(CountingLock::locks, 2);
  EXPECT_EQ(CountingLock::unlocks, 2);
}

TEST(LockedHeap, ExternalLockBlocksOtherThreads) {
  LockedHeap<std::mutex, MallocHeap> h;
  std::atomic<bool> done{false};
  h.lock();
  std::thread other([&] {
    h.free(h.malloc(64));
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(done.load()) << "malloc ran while the heap was locked";
  h.unlock();
  other.join();
  EXPECT_TRUE(done.load());
}

TEST(LockedHeap, FourThreadsCrossThreadFrees) {
  const std::size_t before = processAccount().held();
  {
    SharedKingsley h;
    crossThreadStress(h, 4, 1'000'000, 7);
    EXPECT_GT(h.bytesHeld(), 0u);
  }
  EXPECT_EQ(processAccount().held(), before);
}

TEST(LockedHeap, FourThreadsWithStdMutex) {
  LockedHeap<std::mutex, SizeHeap<MallocHeap>> h;
  crossThreadStress(h, 4, 200'000, 8);
  EXPECT_EQ(h.bytesHeld(), 0u);
}

TEST(LockedHeap, DifferentialOverKingsley) {
  test::expectEverythingReturned<ANSIWrapper<LockedHeap<SpinLock, KingsleyHeap<SbrkHeap<>>>>>(
      {.seed = 11, .ops = 1'000'000, .zeroSizes = true});
}
