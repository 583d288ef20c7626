// ThreadBoundHeap over PageQueues: the ownership rules, checked thread by thread with Runner: a block freed by
// another thread goes back to its owner's page, a parked (full) page comes back through
// the reclaim stack, an exiting thread's heap is adopted by the next thread, and a
// producer/consumer pair stays within a small factor of its live set.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "strata/combining/fine_size_classes.hpp"
#include "strata/general/strata_heap.hpp"
#include "strata/top/segment_heap.hpp"
#include "common/differential.hpp"
#include "common/thread_stress.hpp"

using namespace strata;

using Owner = StrataHeap;
// Coarse classes, a small largest class (most Mixed sizes take the huge path), 2 MiB
// segments of 32 KiB slots.
using SmallClasses = StrataHeapOf<SegmentHeap<21>, FineSizeClasses<2, 4096>, 15>;
static_assert(SizedHeap<Owner> && Owner::Alignment == 16);

namespace {
std::uintptr_t segmentOf(void* p) {
  return reinterpret_cast<std::uintptr_t>(p) & ~(SegmentHeap<>::SegmentSize - 1);
}
}  // namespace

TEST(ThreadBoundHeap, RemoteFreeGoesBackToTheOwner) {
  auto h = std::make_unique<Owner>();
  test::Runner a;
  void* p = nullptr;
  a.run([&] { p = h->malloc(48); });
  h->free(p);  // the test thread is not the owner
  for (int i = 0; i < 5000; ++i) {
    void* q = h->malloc(48);
    ASSERT_NE(q, p) << "a foreign thread reused the owner's block";
  }
  bool back = false;
  a.run([&] {
    std::vector<void*> got;
    for (int i = 0; i < 5000 && !back; ++i) {
      got.push_back(h->malloc(48));
      back = got.back() == p;
    }
    for (void* q : got) h->free(q);
  });
  EXPECT_TRUE(back) << "the owner never got its block back";
}

TEST(ThreadBoundHeap, ParkedPageComesBackThroughTheReclaimStack) {
  auto h = std::make_unique<Owner>();
  test::Runner a;
  std::vector<void*> first;
  a.run([&] {
    // Fill more than one page of the 1 KiB class, so the first page gets parked as full.
    for (int i = 0; i < 200; ++i) first.push_back(h->malloc(1024));
  });
  void* victim = first[0];
  h->free(victim);  // claims the parked page and pushes it onto the owner's reclaim stack
  bool back = false;
  const std::size_t heldBefore = h->stats().bytesFromSystem;
  a.run([&] {
    for (int i = 0; i < 200 && !back; ++i) {
      void* q = h->malloc(1024);
      first.push_back(q);
      back = q == victim;
    }
  });
  EXPECT_TRUE(back);
  EXPECT_LE(h->stats().bytesFromSystem, heldBefore + (256u << 10));
  for (std::size_t i = 1; i < first.size(); ++i) h->free(first[i]);
}

TEST(ThreadBoundHeap, AnExitedThreadsHeapIsAdopted) {
  auto h = std::make_unique<Owner>();
  void* kept = nullptr;
  std::thread([&] {
    kept = h->malloc(64);
    for (int i = 0; i < 100; ++i) h->free(h->malloc(64));
  }).join();
  void* adopted = nullptr;
  std::thread([&] { adopted = h->malloc(64); }).join();
  EXPECT_EQ(segmentOf(adopted), segmentOf(kept)) << "the new thread made a heap of its own";
  h->free(adopted);
  h->free(kept);
}

TEST(ThreadBoundHeap, ProducerConsumerQueueStaysBounded) {
  auto h = std::make_unique<Owner>();
  std::mutex m;
  std::deque<std::pair<void*, std::size_t>> q;
  std::atomic<bool> done{false};
  std::atomic<std::size_t> live{0}, peakLive{0};
  std::thread consumer([&] {
    for (;;) {
      std::pair<void*, std::size_t> item{nullptr, 0};
      {
        std::lock_guard<std::mutex> g(m);
        if (!q.empty()) {
          item = q.front();
          q.pop_front();
        }
      }
      if (item.first == nullptr) {
        if (done.load()) return;
        std::this_thread::yield();
        continue;
      }
      EXPECT_EQ(static_cast<unsigned char*>(item.first)[item.second - 1], 0x77);
      h->free(item.first);
      live.fetch_sub(item.second);
    }
  });
  std::mt19937_64 rng(4);
  for (int i = 0; i < 1'000'000; ++i) {
    const std::size_t n = 16 + rng() % 2000;
    void* p = h->malloc(n);
    std::memset(p, 0x77, n);
    const std::size_t now = live.fetch_add(n) + n;
    if (now > peakLive.load()) peakLive.store(now);
    std::lock_guard<std::mutex> g(m);
    q.emplace_back(p, n);
    if (q.size() > 50'000) {
      m.unlock();
      while (true) {
        std::this_thread::yield();
        std::lock_guard<std::mutex> g2(m);
        if (q.size() < 10'000) break;
      }
      m.lock();
    }
  }
  done.store(true);
  consumer.join();
  EXPECT_LT(h->stats().peakBytesFromSystem, 3 * peakLive.load() + (8u << 20))
      << "peak live " << peakLive.load();
}

TEST(ThreadBoundHeap, CrossThreadStressWithSmallClasses) {
  auto h = std::make_unique<SmallClasses>();
  test::crossThreadStress(*h, 4, 400'000, 9);
}

TEST(ThreadBoundHeap, DifferentialWithSmallClasses) {
  test::expectEverythingReturned<SmallClasses>({.seed = 21, .ops = 300'000, .maxLive = 2000});
}
