// Memory held from the system: bytes now and the high-water mark.
//
// Every top heap charges what it obtains and refunds what it returns, both to its own
// account and to the process-wide one. The process account is the exact "memory
// consumption" of an experiment (the paper's high-water mark of memory requested from the
// operating system) even when a composition has several top heaps; a top heap's own account
// answers bytesHeld()/peakBytesHeld() for that heap alone.
#pragma once
#include <atomic>
#include <cstddef>

namespace strata {

class MemoryAccount {
 public:
  void charge(std::size_t n) noexcept {
    const std::size_t now = held_.fetch_add(n, std::memory_order_relaxed) + n;
    std::size_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak &&
           !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
  }
  void refund(std::size_t n) noexcept { held_.fetch_sub(n, std::memory_order_relaxed); }
  std::size_t held() const noexcept { return held_.load(std::memory_order_relaxed); }
  std::size_t peak() const noexcept { return peak_.load(std::memory_order_relaxed); }
  // Starts a new measurement: the peak becomes what is held now.
  void resetPeak() noexcept { peak_.store(held(), std::memory_order_relaxed); }

 private:
  std::atomic<std::size_t> held_{0};
  std::atomic<std::size_t> peak_{0};
};

// Everything every Strata top heap in this program holds from the system.
inline MemoryAccount& processAccount() noexcept {
  static MemoryAccount account;
  return account;
}

// Base of the top heaps: charges both accounts and answers the AccountedHeap queries.
class AccountedTop {
 public:
  std::size_t bytesHeld() const noexcept { return own_.held(); }
  std::size_t peakBytesHeld() const noexcept { return own_.peak(); }

 protected:
  void charge(std::size_t n) noexcept {
    own_.charge(n);
    processAccount().charge(n);
  }
  void refund(std::size_t n) noexcept {
    own_.refund(n);
    processAccount().refund(n);
  }

 private:
  MemoryAccount own_;
};

}  // namespace strata
