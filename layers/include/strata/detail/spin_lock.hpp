// SpinLock: the default lock of LockedHeap, ThreadHeap and PHOThreadHeap, and the helpers
// the thread layers share (the cache-line size they pad to).
//
// A heap's critical section is a few dozen instructions, so waiting for the holder is
// normally shorter than a trip to the kernel. The lock is one byte, never allocates and never
// calls into libpthread, so it is safe inside a malloc replacement. Because a holder can be
// preempted (more threads than cores), a waiter spins on a plain load for a short while and
// then yields its time slice instead of burning it.
#pragma once
#include <atomic>
#include <cstddef>

#include "strata/concepts.hpp"
#include "strata/platform/thread.hpp"

namespace strata {

namespace detail {

// The destructive-interference distance on x86-64 and most AArch64 parts. Written out
// because std::hardware_destructive_interference_size warns when used in a header (GCC 12).
inline constexpr std::size_t kCacheLine = 64;

// Tells the core we are spinning (lower power, no memory-order mis-speculation on exit).
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace detail

// Test-and-test-and-set lock. Uncontended lock() is one atomic exchange and unlock() one
// release store; a waiter spins kSpins times, then calls sched_yield between checks.
class SpinLock {
 public:
  static constexpr int kSpins = 64;

  SpinLock() = default;
  SpinLock(const SpinLock&) = delete;
  SpinLock& operator=(const SpinLock&) = delete;

  void lock() noexcept {
    while (locked_.exchange(true, std::memory_order_acquire)) {
      for (int spins = 0; locked_.load(std::memory_order_relaxed); ++spins) {
        if (spins < kSpins)
          detail::cpu_relax();
        else
          platform::yieldThread();
      }
    }
  }

  // Takes the lock only if it is free; never waits.
  bool try_lock() noexcept {
    return !locked_.load(std::memory_order_relaxed) &&
           !locked_.exchange(true, std::memory_order_acquire);
  }

  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace strata
