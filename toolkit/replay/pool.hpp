// Pool replay (engine.cpp): a fixed set of replay threads, recorded thread t on replay thread
// t % n. Worker threads 1..n-1 and the calling thread as replay thread 0 replay each window
// between two barriers. Included by engine.cpp only.
#pragma once
#include <barrier>
#include <cstddef>
#include <thread>
#include <vector>

#include "replay/plan.hpp"
#include "replay/replay_loop.hpp"

namespace strata::replay::detail {

class Pool {
 public:
  // Starts threads - 1 workers when active. The barrier is made in every mode: its state comes
  // from the allocator under test, before the start-up heap is measured, so every replay
  // starts from the same allocator state whatever its thread mode.
  Pool(bool active, unsigned threads, const PlanWindow& w, RunFn run, ThreadCounts* counts)
      : sync_(static_cast<std::ptrdiff_t>(active ? threads : 1)), w_(w), run_(run),
        counts_(counts) {
    if (active)
      for (unsigned t = 1; t < threads; ++t) workers_.emplace_back([this, t] { work(t); });
  }

  // Replays the current window over the object table and sizes as they are now (they may
  // move between windows, as they grow): replay thread 0's operations here, the others' on
  // the workers, which read them after the barrier.
  void runWindow(void** table, const std::uint64_t* sizes) {
    table_ = table;
    sizes_ = sizes;
    sync_.arrive_and_wait();
    replay(0);
    sync_.arrive_and_wait();
  }

  // Ends the workers (after the last window).
  void stop() {
    stop_ = true;
    sync_.arrive_and_wait();
    for (std::thread& t : workers_) t.join();
  }

 private:
  void replay(unsigned t) {
    const auto& ops = w_.ops[t];
    run_(ops.data(), ops.data() + ops.size(), table_, sizes_, counts_[t]);
    collectAllocatorTime(counts_[t]);
  }

  void work(unsigned t) {
    for (;;) {
      sync_.arrive_and_wait();
      if (stop_) return;
      replay(t);
      sync_.arrive_and_wait();
    }
  }

  std::barrier<> sync_;
  bool stop_ = false;  // read by the workers after a barrier, written before it
  std::vector<std::thread> workers_;
  const PlanWindow& w_;
  RunFn run_;
  void** table_ = nullptr;
  const std::uint64_t* sizes_ = nullptr;
  ThreadCounts* counts_;
};

}  // namespace strata::replay::detail
