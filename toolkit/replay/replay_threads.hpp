// Lifecycle replay (engine.cpp): one OS thread per recorded thread, started and ended where
// the program's was, and the per-window sync between them and the coordinating thread.
// Included by engine.cpp only.
#pragma once
#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>

#include "replay/plan.hpp"
#include "replay/replay_loop.hpp"

namespace strata::replay::detail {

// ---- lifecycle threads: one OS thread per recorded thread, as the program had them ----

// Futex wait while *word == expected, and wake every waiter.
inline void futexWaitWord(std::uint32_t* word, std::uint32_t expected) noexcept {
  ::syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}
inline void futexWakeWord(std::uint32_t* word) noexcept {
  ::syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

struct Lifecycle;

// One recorded thread's OS thread.
struct alignas(64) ThreadSlot {
  std::uint32_t go = 0;    // futex word: the coordinator bumps it to run a window (or to stop)
  std::uint32_t seen = 0;  // the worker's: the last go value it acted on
  bool ending = false;     // the thread ends after this window's operations
  bool running = false;    // an OS thread is alive for the slot
  pthread_t handle{};
  Lifecycle* owner = nullptr;
  std::uint32_t index = 0;
};

// The coordinator (the engine's calling thread, which replays nothing itself) and the
// per-window sync: a countdown of the window's participants (the threads with events in it)
// that the last one to finish wakes, and a word per thread to start it. Participants change
// from window to window, so no fixed barrier.
struct Lifecycle {
  const PlanWindow* window = nullptr;
  RunFn run = nullptr;
  void** table = nullptr;                // set before each window (it may move as it grows)
  const std::uint64_t* sizes = nullptr;  // the same
  ThreadCounts* counts = nullptr;  // by recorded thread
  ThreadSlot* slots = nullptr;     // by recorded thread
  std::uint32_t remaining = 0;     // futex word: participants still replaying the window
  bool stop = false;
  std::uint64_t live = 0, peakLive = 0, started = 0;
  std::string failure;  // why a thread could not start, when runWindow returned false

  static void* worker(void* arg) noexcept {
    ThreadSlot& s = *static_cast<ThreadSlot*>(arg);
    Lifecycle& x = *s.owner;
    for (;;) {
      std::uint32_t g;
      while ((g = __atomic_load_n(&s.go, __ATOMIC_ACQUIRE)) == s.seen) futexWaitWord(&s.go, s.seen);
      s.seen = g;
      if (__atomic_load_n(&x.stop, __ATOMIC_ACQUIRE)) return nullptr;
      const OwnVector<PlanOp>& ops = x.window->ops[s.index];
      x.run(ops.data(), ops.data() + ops.size(), x.table, x.sizes, x.counts[s.index]);
      collectAllocatorTime(x.counts[s.index]);
      const bool ending = s.ending;  // read before the countdown: the slot may be reused after
      if (__atomic_sub_fetch(&x.remaining, 1, __ATOMIC_ACQ_REL) == 0) futexWakeWord(&x.remaining);
      if (ending) return nullptr;  // the thread exits, as the program's did
    }
  }

  // Starts the OS thread of recorded thread t; false with failure set when it cannot.
  bool start(std::uint32_t t) {
    ThreadSlot& s = slots[t];
    s.go = s.seen = 0;
    s.ending = false;
    s.owner = this;
    s.index = t;
    const int e = ::pthread_create(&s.handle, nullptr, &worker, &s);
    if (e != 0) {
      failure = "cannot start a replay thread (" + std::to_string(live) + " alive): " + std::strerror(e);
      return false;
    }
    s.running = true;
    ++started;
    peakLive = std::max(peakLive, ++live);
    return true;
  }

  // Replays window w: its new threads start first, every thread with events in it replays its
  // operations, and the threads that end in it exit and are joined before this returns. False
  // when a thread cannot start (failure says why). Code under the allocator it measures: no
  // exceptions, the engine turns this into the replay's status.
  bool runWindow(const PlanWindow& w) {
    for (const std::uint32_t t : w.started)
      if (!start(t)) return false;
    window = &w;
    for (const std::uint32_t t : w.ended) slots[t].ending = true;
    __atomic_store_n(&remaining, static_cast<std::uint32_t>(w.threads.size()), __ATOMIC_RELEASE);
    for (const std::uint32_t t : w.threads) {
      __atomic_add_fetch(&slots[t].go, 1, __ATOMIC_RELEASE);
      futexWakeWord(&slots[t].go);
    }
    std::uint32_t r;
    while ((r = __atomic_load_n(&remaining, __ATOMIC_ACQUIRE)) != 0) futexWaitWord(&remaining, r);
    for (const std::uint32_t t : w.ended) join(slots[t]);
    return true;
  }

  void join(ThreadSlot& s) noexcept {
    ::pthread_join(s.handle, nullptr);
    s.running = false;
    s.ending = false;
    --live;
  }

  // Ends every thread still alive (those that live to the end of the trace).
  void stopAll(std::size_t slotCount) noexcept {
    __atomic_store_n(&stop, true, __ATOMIC_RELEASE);
    for (std::size_t t = 0; t < slotCount; ++t)
      if (slots[t].running) {
        __atomic_add_fetch(&slots[t].go, 1, __ATOMIC_RELEASE);
        futexWakeWord(&slots[t].go);
      }
    for (std::size_t t = 0; t < slotCount; ++t)
      if (slots[t].running) join(slots[t]);
  }
};

}  // namespace strata::replay::detail
