// ProcessHeap<H>: the one H of the process, as MallocShim serves it. Built on the first call
// with placement new into static storage (before TLS exists, while dlsym allocates) and never
// destroyed: objects may be freed by exit handlers after every destructor has run. When H has
// prepareFork, parentAfterFork and childAfterFork, they are registered with pthread_atfork
// once H is built, so H is held still across fork() and released in both processes.
//
// Cost of get(): an acquire load and a branch; the build is out of line.
#pragma once
#include <pthread.h>

#include <atomic>
#include <concepts>
#include <new>

#include "strata/platform/process.hpp"
#include "strata/platform/thread.hpp"

namespace strata {

// H is built without arguments (MallocShimHeap says what else the shim needs of it).
template <std::default_initializable H>
class ProcessHeap {
 public:
  // The process-wide heap, built on first use.
  static H& get() noexcept {
    if (state_.load(std::memory_order_acquire) == kReady) [[likely]] return *instance();
    return build();
  }

  // The pthread_atfork handlers (registered only when H has all three members).
  static void prepareFork() noexcept { get().prepareFork(); }
  static void parentAfterFork() noexcept { get().parentAfterFork(); }
  static void childAfterFork() noexcept { get().childAfterFork(); }

 private:
  enum : int { kNone = 0, kBuilding = 1, kReady = 2 };

  static H* instance() noexcept { return std::launder(reinterpret_cast<H*>(storage_)); }

  // The first caller builds the heap; any other thread waits until it is ready. The fork
  // handlers are registered before the heap is marked ready, so that no other thread can be
  // inside the heap (holding its lock) while a fork finds no handler to hold it still; a
  // malloc that pthread_atfork itself makes on the building thread is served by the heap,
  // already constructed (`builder_` says which thread that is). A child forked while another
  // thread was building finishes the build itself: the builder does not exist in it.
  [[gnu::cold, gnu::noinline]] static H& build() noexcept {
    int expected = kNone;
    if (state_.compare_exchange_strong(expected, kBuilding, std::memory_order_acq_rel)) {
      builderPid_.store(platform::processId(), std::memory_order_relaxed);
      finishBuild();
    } else {
      while (state_.load(std::memory_order_acquire) != kReady) {
        if (constructed_.load(std::memory_order_acquire) &&
            ::pthread_equal(builder_.load(std::memory_order_relaxed), ::pthread_self()))
          break;  // the building thread, called back from pthread_atfork
        const pid_t builderPid = builderPid_.load(std::memory_order_relaxed);
        if (builderPid != 0 && builderPid != platform::processId()) {
          builderPid_.store(platform::processId(), std::memory_order_relaxed);  // a child: build here
          finishBuild();
          break;
        }
        platform::yieldThread();
      }
    }
    return *instance();
  }

  // Constructs H (unless a parent process already had) and registers the fork handlers; then
  // the heap is ready.
  static void finishBuild() noexcept {
    if (!constructed_.load(std::memory_order_acquire)) {
      ::new (static_cast<void*>(storage_)) H();
      builder_.store(::pthread_self(), std::memory_order_relaxed);
      constructed_.store(true, std::memory_order_release);
    } else {
      builder_.store(::pthread_self(), std::memory_order_relaxed);
    }
    if constexpr (requires(H& h) {
                    h.prepareFork();
                    h.parentAfterFork();
                    h.childAfterFork();
                  }) {
      ::pthread_atfork(&ProcessHeap::prepareFork, &ProcessHeap::parentAfterFork,
                       &ProcessHeap::childAfterFork);
    }
    state_.store(kReady, std::memory_order_release);
  }

  alignas(H) static inline unsigned char storage_[sizeof(H)];
  static inline std::atomic<int> state_{kNone};
  static inline std::atomic<bool> constructed_{false};  // H is built (state_ may not be ready)
  static inline std::atomic<pthread_t> builder_{};       // the thread that built it
  static inline std::atomic<pid_t> builderPid_{0};       // the process it was built in
};

}  // namespace strata
