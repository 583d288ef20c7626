#include "strata/utility/unique_heap.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "strata/general/kingsley_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/utility/locked_heap.hpp"

using namespace strata;

using Shared = UniqueHeap<KingsleyHeap<SbrkHeap<>>>;
static_assert(SizedHeap<Shared> && ClearableHeap<Shared> && AccountedHeap<Shared>);
static_assert(Shared::Alignment == 16);
static_assert(std::is_empty_v<Shared>, "a handle holds nothing");
static_assert(!SizedHeap<UniqueHeap<SbrkHeap<>>>);

namespace {

// Counts constructions, and is slow to construct, so racing first uses would show.
struct SlowToBuild : MallocHeap {
  static inline std::atomic<int> built{0};
  SlowToBuild() {
    ++built;
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
};

// Remembers being destroyed; a free after that ends the process with a failure, since a
// static object freeing at exit would then be writing into a dead heap.
struct DiesLoudly : MallocHeap {
  static inline bool destroyed = false;
  ~DiesLoudly() { destroyed = true; }
  void free(void* p) noexcept {
    if (destroyed) {
      std::fputs("UniqueHeap instance was destroyed before a static object freed into it\n",
                 stderr);
      std::_Exit(3);
    }
    MallocHeap::free(p);
  }
};

// A static object built before the heap's first use, freeing into it during exit.
struct FreesAtExit {
  void* p = nullptr;
  ~FreesAtExit() { UniqueHeap<DiesLoudly>().free(p); }
} freesAtExit;

struct TagA;
struct TagB;

}  // namespace

TEST(UniqueHeap, AllHandlesShareOneInstance) {
  Shared a, b;
  // The instance another thread gets is this thread's (not one per thread, nor a new one
  // per call).
  const void* fromOtherThread = nullptr;
  std::thread([&] { fromOtherThread = &Shared::instance(); }).join();
  EXPECT_EQ(fromOtherThread, &Shared::instance());
  void* p = a.malloc(48);
  ASSERT_NE(p, nullptr);
  EXPECT_GE(b.getSize(p), 48u);
  b.free(p);                   // freed through another handle ...
  EXPECT_EQ(a.malloc(40), p);  // ... it is back in the one shared heap
  EXPECT_GT(b.peakBytesHeld(), 0u);
  Shared().free(p);
}

// A handle reports its instance's books: what a heap of the same kind, used directly, reports
// after the same requests (a fresh instance of its own, by its tag).
TEST(UniqueHeap, HandlesReportTheInstancesBooks) {
  struct TagBooks;
  using Fresh = UniqueHeap<KingsleyHeap<SbrkHeap<>>, TagBooks>;
  KingsleyHeap<SbrkHeap<>> direct;
  EXPECT_EQ(Fresh().bytesHeld(), 0u);
  std::vector<void*> viaHandles, viaDirect;
  for (std::size_t n : {48u, 100u, 5000u, 48u}) {
    viaHandles.push_back(Fresh().malloc(n));
    viaDirect.push_back(direct.malloc(n));
    EXPECT_EQ(Fresh().bytesHeld(), direct.bytesHeld()) << n;
    EXPECT_EQ(Fresh().getSize(viaHandles.back()), direct.getSize(viaDirect.back())) << n;
  }
  EXPECT_GT(direct.bytesHeld(), 0u);
  for (void* p : viaHandles) Fresh().free(p);
  for (void* p : viaDirect) direct.free(p);
  EXPECT_EQ(Fresh().bytesHeld(), direct.bytesHeld());
  EXPECT_EQ(Fresh().peakBytesHeld(), direct.peakBytesHeld());
  EXPECT_GT(Fresh().peakBytesHeld(), 0u);
  Fresh().clear();
  direct.clear();
  EXPECT_EQ(Fresh().bytesHeld(), direct.bytesHeld());
}

TEST(UniqueHeap, TagsGiveSeparateInstances) {
  using A = UniqueHeap<MallocHeap, TagA>;
  using B = UniqueHeap<MallocHeap, TagB>;
  EXPECT_NE(static_cast<void*>(&A::instance()), static_cast<void*>(&B::instance()));
  EXPECT_NE(static_cast<void*>(&A::instance()),
            static_cast<void*>(&UniqueHeap<MallocHeap>::instance()));
  void* p = A().malloc(10);
  EXPECT_GT(A().bytesHeld(), 0u);
  EXPECT_EQ(B().bytesHeld(), 0u);
  A().free(p);
  EXPECT_EQ(A().bytesHeld(), 0u);
}

TEST(UniqueHeap, ConcurrentFirstUseBuildsOnce) {
  std::atomic<int> ready{0};
  std::vector<std::thread> pool;
  std::vector<void*> seen(4);
  for (int t = 0; t < 4; ++t)
    pool.emplace_back([&, t] {
      ++ready;
      while (ready.load() < 4) {
      }
      seen[t] = &UniqueHeap<SlowToBuild>::instance();
    });
  for (auto& th : pool) th.join();
  EXPECT_EQ(SlowToBuild::built.load(), 1);
  for (void* s : seen) EXPECT_EQ(s, seen[0]);
}

TEST(UniqueHeap, SharedAcrossThreadsWithALockedHeap) {
  using H = UniqueHeap<SpinLockedHeap<KingsleyHeap<SbrkHeap<>>>>;
  std::vector<std::thread> pool;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t)
    pool.emplace_back([&] {
      std::vector<void*> mine;
      for (int i = 0; i < 20000; ++i) {
        void* p = H().malloc(32);
        if (p == nullptr) ++bad;
        mine.push_back(p);
        if (mine.size() > 64) {
          H().free(mine.front());
          mine.erase(mine.begin());
        }
      }
      for (void* p : mine) H().free(p);
    });
  for (auto& th : pool) th.join();
  EXPECT_EQ(bad.load(), 0);
}

// The real check happens at exit: freesAtExit, built before the heap, frees into it after
// main returns. The test executable fails (exit status 3) if the heap was destroyed first.
TEST(UniqueHeap, OutlivesStaticObjectsBuiltBeforeIt) {
  freesAtExit.p = UniqueHeap<DiesLoudly>().malloc(64);
  ASSERT_NE(freesAtExit.p, nullptr);
  EXPECT_FALSE(DiesLoudly::destroyed);
}
