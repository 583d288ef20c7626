#include "strata/threads/thread_heap.hpp"

#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "strata/general/kingsley_heap.hpp"
#include "strata/representation/size_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/null_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/utility/ansi_wrapper.hpp"
#include "common/differential.hpp"
#include "common/thread_stress.hpp"

using namespace strata;

using Top = SbrkHeap<std::size_t{1} << 32>;
using PerThread = ThreadHeap<4, KingsleyHeap<Top>>;

static_assert(SizedHeap<PerThread> && ClearableHeap<PerThread> && AccountedHeap<PerThread>);
static_assert(PerThread::Alignment == 16);
static_assert(!SizedHeap<ThreadHeap<2, Top>> && !AccountedHeap<ThreadHeap<2, NullHeap<16>>>);
static_assert(!std::is_copy_constructible_v<PerThread>);

TEST(ThreadHeap, ConsecutiveThreadsGetDistinctHeaps) {
  const std::size_t mine = PerThread::currentHeap();
  // Threads are numbered when they first ask, so number five one after another: they take
  // the heaps in turn, 0, 1, 2, 3, 0, ... from wherever the numbering stands.
  std::vector<std::size_t> order;
  for (int t = 0; t < 5; ++t) std::thread([&] { order.push_back(PerThread::currentHeap()); }).join();
  ASSERT_EQ(order.size(), 5u);
  EXPECT_LT(order[0], 4u);
  for (std::size_t t = 1; t < order.size(); ++t) EXPECT_EQ(order[t], (order[0] + t) % 4) << t;
  EXPECT_EQ(std::set<std::size_t>(order.begin(), order.end()).size(), 4u);
  // This thread keeps the heap it had before the five were numbered.
  EXPECT_EQ(PerThread::currentHeap(), mine);
}

TEST(ThreadHeap, FreeGoesToTheCallingThreadsHeap) {
  PerThread h;
  test::Runner a, b;
  std::size_t heapA = 0, heapB = 0;
  a.run([&] { heapA = PerThread::currentHeap(); });
  b.run([&] { heapB = PerThread::currentHeap(); });
  ASSERT_NE(heapA, heapB);

  void* p = nullptr;
  void* fromA = nullptr;
  void* fromB = nullptr;
  a.run([&] { p = h.malloc(64); });
  ASSERT_NE(p, nullptr);
  b.run([&] { h.free(p); });             // joins B's heap, not A's
  a.run([&] { fromA = h.malloc(64); });  // A's heap has nothing cached: a new object
  b.run([&] { fromB = h.malloc(64); });  // B's heap hands back the object B freed
  EXPECT_NE(fromA, p);
  EXPECT_EQ(fromB, p);
  a.run([&] { h.free(fromA); });
  b.run([&] { h.free(fromB); });
}

TEST(ThreadHeap, HeldIsTheSumAndMatchesTheProcessAccount) {
  const std::size_t before = processAccount().held();
  {
    PerThread h;
    test::Runner a, b;
    std::vector<void*> objs;
    a.run([&] {
      for (int i = 0; i < 100; ++i) objs.push_back(h.malloc(1000));
    });
    b.run([&] {
      for (int i = 0; i < 100; ++i) objs.push_back(h.malloc(3000));
    });
    EXPECT_GE(h.bytesHeld(), 100u * 1000 + 100u * 3000);
    EXPECT_EQ(processAccount().held() - before, h.bytesHeld());
    EXPECT_GE(h.peakBytesHeld(), h.bytesHeld());
    for (void* p : objs) h.free(p);
  }
  EXPECT_EQ(processAccount().held(), before);
}

// Each heap ends up caching objects carved from the other's memory; destroying the layer
// must still return everything without touching memory already given back.
TEST(ThreadHeap, CrossFreedObjectsSurviveDestruction) {
  const std::size_t before = processAccount().held();
  {
    PerThread h;
    test::Runner a, b;
    std::vector<void*> objs;
    auto make = [&](std::size_t size) {
      return [&, size] {
        for (int i = 0; i < 2000; ++i) objs.push_back(h.malloc(size));
      };
    };
    auto drop = [&] {
      for (void* p : objs) h.free(p);
      objs.clear();
    };
    // Different sizes, so neither thread's mallocs are served from what it just cached.
    a.run(make(24));
    b.run(drop);
    b.run(make(1000));
    a.run(drop);
  }
  EXPECT_EQ(processAccount().held(), before);
}

TEST(ThreadHeap, ClearEmptiesEveryHeap) {
  PerThread h;
  test::Runner a, b;
  a.run([&] {
    h.free(h.malloc(100));
    ASSERT_NE(h.malloc(5000), nullptr);
  });
  b.run([&] { ASSERT_NE(h.malloc(300), nullptr); });
  EXPECT_GT(h.bytesHeld(), 0u);
  h.clear();
  EXPECT_EQ(h.bytesHeld(), 0u);
  a.run([&] { EXPECT_NE(h.malloc(100), nullptr); });
}

TEST(ThreadHeap, FourThreadsCrossThreadFrees) {
  const std::size_t before = processAccount().held();
  {
    PerThread h;
    test::crossThreadStress(h, 4, 1'000'000, 21);
  }
  EXPECT_EQ(processAccount().held(), before);
}

TEST(ThreadHeap, OverMallocHeapFourThreads) {
  const std::size_t before = processAccount().held();
  {
    ThreadHeap<4, SizeHeap<MallocHeap>, std::mutex> h;
    test::crossThreadStress(h, 4, 200'000, 22);
    EXPECT_EQ(h.bytesHeld(), 0u);  // the sum cancels even though single heaps were skewed
  }
  EXPECT_EQ(processAccount().held(), before);
}

TEST(ThreadHeap, DifferentialSingleThread) {
  test::expectEverythingReturned<ANSIWrapper<ThreadHeap<4, KingsleyHeap<SbrkHeap<>>>>>(
      {.seed = 23, .ops = 500'000, .zeroSizes = true});
}
