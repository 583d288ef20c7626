// The recorder's lock: the library's SpinLock (strata/detail/spin_lock.hpp) with the two
// things the recorder adds for its use of it.
//
// - A single-threaded process takes no lock at all. No other thread exists to contend, and
//   none can be created while the only one is inside the recorder (glibc clears
//   __libc_single_threaded before a second thread starts, and the recorder creates no thread
//   while it holds the lock). This spares the atomic exchange, which also waits for every
//   store before it (the program's writes to its objects among them) to reach the cache.
// - A waiter backs off exponentially between looks at the lock: the critical section is a
//   few dozen nanoseconds, and each hand-over between cores moves the lock's, the writer's
//   and the address table's cache lines, so a holder that takes the lock again for its next
//   call before the waiter looks is cheaper overall than strict turns (bench/record_overhead's
//   two-thread workloads measure it). After a while the waiter yields the CPU, in case the
//   holder was descheduled.
//
// Why SpinLock is safe where the recorder locks: it is one atomic byte, never allocates and
// makes no call but sched_yield (async-signal-safe) while waiting. The recorder's signal
// handler only ever uses tryLock(), and only when its thread is not inside the recorder, so
// it cannot deadlock; the fork handlers hold the lock across fork() (lock() before, unlock()
// in the parent) and the child, which has only the forking thread, resets it to free.
#pragma once
#include <sched.h>
#include <sys/single_threaded.h>

#include <algorithm>

#include "strata/detail/spin_lock.hpp"

namespace strata::record {

class RecorderLock {
 public:
  void lock() {
    if (__libc_single_threaded) return;
    if (!lock_.try_lock()) lockSlow();
  }
  // Takes the lock when it is free; never waits (the signal handler, a thread whose ring is
  // full). Takes it even in a single-threaded process: the signal handler's caller may be.
  bool tryLock() { return lock_.try_lock(); }
  void unlock() { lock_.unlock(); }
  // The lock in a fork child: free (the thread that held it across fork is the child's only
  // thread, and the others are gone).
  void reset() { lock_.unlock(); }

 private:
  [[gnu::noinline]] void lockSlow() {
    unsigned backoff = 1;
    for (unsigned rounds = 0;; ++rounds) {
      if (rounds < kSpinRounds) {
        for (unsigned i = 0; i < backoff; ++i) strata::detail::cpu_relax();
        backoff = std::min(backoff * 2, kMaxBackoff);
      } else {
        ::sched_yield();
      }
      if (lock_.try_lock()) return;
    }
  }
  // Up to kMaxBackoff PAUSEs between looks, kSpinRounds looks, then sched_yield between looks.
  static constexpr unsigned kMaxBackoff = 256;
  static constexpr unsigned kSpinRounds = 64;
  strata::SpinLock lock_;
};

}  // namespace strata::record
