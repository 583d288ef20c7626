#include "strata/utility/locked_heap.hpp"

#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "strata/general/kingsley_heap.hpp"
#include "strata/representation/size_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/utility/ansi_wrapper.hpp"
#include "common/blocked_thread.hpp"
#include "common/differential.hpp"
#include "common/thread_stress.hpp"

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

// Another thread's malloc, and then its free, wait while the heap is locked: each is seen
// asleep in the mutex's futex wait, not returned (however slowly that thread is scheduled),
// and returns once the heap is unlocked.
TEST(LockedHeap, ExternalLockBlocksOtherThreads) {
  LockedHeap<std::mutex, MallocHeap> h;
  test::expectMallocAndFreeHeldOut(
      h, 64, [&] { h.lock(); }, [&] { h.unlock(); }, "while the heap was locked");
}

TEST(LockedHeap, FourThreadsCrossThreadFrees) {
  const std::size_t before = processAccount().held();
  {
    SharedKingsley h;
    test::crossThreadStress(h, 4, 1'000'000, 7);
    EXPECT_GT(h.bytesHeld(), 0u);
  }
  EXPECT_EQ(processAccount().held(), before);
}

TEST(LockedHeap, FourThreadsWithStdMutex) {
  LockedHeap<std::mutex, SizeHeap<MallocHeap>> h;
  test::crossThreadStress(h, 4, 200'000, 8);
  EXPECT_EQ(h.bytesHeld(), 0u);
}

TEST(LockedHeap, DifferentialOverKingsley) {
  test::expectEverythingReturned<ANSIWrapper<LockedHeap<SpinLock, KingsleyHeap<SbrkHeap<>>>>>(
      {.seed = 11, .ops = 1'000'000, .zeroSizes = true});
}
