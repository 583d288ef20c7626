#include "strata/threads/thread_heap.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "strata/general/kingsley_heap.hpp"
#include "strata/representation/size_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/null_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/utility/ansi_wrapper.hpp"
#include "support/differential.hpp"

using namespace strata;

using Top = SbrkHeap<std::size_t{1} << 32>;
using PerThread = ThreadHeap<4, KingsleyHeap<Top>>;

static_assert(SizedHeap<PerThread> && ClearableHeap<PerThread> && AccountedHeap<PerThread>);
static_assert(PerThread::Alignment == 16);
static_assert(!SizedHeap<ThreadHeap<2, Top>> && !AccountedHeap<ThreadHeap<2, NullHeap<16>>>);
static_assert(!std::is_copy_constructible_v<PerThread>);

namespace {

// A thread that runs the closures given to run(), one at a time, and waits for each: lets a
// test act as the same thread (so the same heap) several times, in a fixed order.
class Runner {
 public:
  Runner() : thread_([this] { loop(); }) {}
  ~Runner() {
    {
      std::lock_guard<std::mutex> g(m_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void run(std::function<void()> f) {
    std::unique_lock<std::mutex> l(m_);
    task_ = std::move(f);
    pending_ = true;
    cv_.notify_all();
    cv_.wait(l, [&] { return !pending_; });
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> l(m_);
    for (;;) {
      cv_.wait(l, [&] { return stop_ || pending_; });
      if (!pending_) return;
      l.unlock();
      task_();
      l.lock();
      pending_ = false;
      cv_.notify_all();
    }
  }
  std::mutex m_;
  std::condition_variable cv_;
  std::function<void()> task_;
  bool pending_ = false, stop_ = false;
  std::thread thread_;
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

TEST(ThreadHeap, ConsecutiveThreadsGetDistinctHeaps) {
  std::mutex m;
  std::set<std::size_t> seen;
  std::vector<std::thread> pool;
  // Threads are numbered when they first ask, so number them one after another.
  for (int t = 0; t < 4; ++t) {
    pool.emplace_back([&] {
      std::lock_guard<std::mutex> g(m);
      seen.insert(PerThread::currentHeap());
    });
    pool.back().join();
  }
  EXPECT_EQ(seen.size(), 4u);
  for (std::size_t i : seen) EXPECT_LT(i, 4u);
  EXPECT_EQ(PerThread::currentHeap(), PerThread::currentHeap());
}

TEST(ThreadHeap, FreeGoesToTheCallingThreadsHeap) {
  PerThread h;
  Runner a, b;
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
    Runner a, b;
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
    Runner a, b;
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
  Runner a, b;
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
    crossThreadStress(h, 4, 1'000'000, 21);
  }
  EXPECT_EQ(processAccount().held(), before);
}

TEST(ThreadHeap, OverMallocHeapFourThreads) {
  const std::size_t before = processAccount().held();
  {
    ThreadHeap<4, SizeHeap<MallocHeap>, std::mutex> h;
    crossThreadStress(h, 4, 200'000, 22);
    EXPECT_EQ(h.bytesHeld(), 0u);  // the sum cancels even though single heaps were skewed
  }
  EXPECT_EQ(processAccount().held(), before);
}

TEST(ThreadHeap, DifferentialSingleThread) {
  test::expectEverythingReturned<ANSIWrapper<ThreadHeap<4, KingsleyHeap<SbrkHeap<>>>>>(
      {.seed = 23, .ops = 500'000, .zeroSizes = true});
}
