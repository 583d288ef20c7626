// Helpers for the tests of the thread-safe layers (LockedHeap, ThreadHeap, PHOThreadHeap):
// a cross-thread stress driver that checks every object at its free, and a runner thread
// that lets a test act as one fixed thread several times, in a fixed order.
#pragma once
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "strata/concepts.hpp"
#include "strata/detail/align.hpp"
#include "common/differential.hpp"

namespace strata::test {

// One object of the stress run: its pointer, its requested size and a tag unique across
// threads (thread number in the top byte, a counter below), which fill() writes into it so
// that intact() can tell whether anyone else wrote there while it was live.
struct Obj {
  void* p;
  std::size_t n;
  std::uint64_t tag;
};

// Writes o's tag over all n bytes: the tag's low byte (never 0) everywhere, and the whole
// 8-byte tag in the first word, so that two live objects sharing memory are told apart.
inline void fill(const Obj& o) {
  fillTag(o.p, o.n, static_cast<unsigned char>((o.tag & 0xff) | 1));
  if (o.n >= 8) std::memcpy(o.p, &o.tag, 8);
}

// Checks that o still holds exactly what fill() wrote: the full tag in its first word and
// the tag byte in every other byte.
inline bool intact(const Obj& o) {
  std::uint64_t head = o.tag;
  if (o.n >= 8) std::memcpy(&head, o.p, 8);
  std::size_t bad = 0;
  const std::size_t skip = o.n >= 8 ? 8 : 0;
  return head == o.tag && checkTag(static_cast<char*>(o.p) + skip, o.n - skip,
                                   static_cast<unsigned char>((o.tag & 0xff) | 1), bad);
}

// Runs `threads` threads (at least 2) through `ops` operations in all, mixing mallocs of
// 1..256 bytes (1..16 KiB one time in 16) with frees by the allocating thread or, a quarter
// of the time, by another thread the object is sent to through a queue. Checks that every
// malloc succeeds, every object is aligned to H::Alignment and intact when freed, every
// object is freed exactly once, and that at least ops/4 mallocs ran.
template <Heap H>
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

// A thread that runs the closures given to run(), one at a time, and waits for each: lets a
// test act as the same thread (so the same per-thread heap) several times, in a fixed order,
// and so check which thread's heap an object went to.
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

  // Runs f on the runner's thread and returns when it has finished.
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

}  // namespace strata::test
