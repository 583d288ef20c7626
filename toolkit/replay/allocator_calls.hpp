// How the replay loop (replay_loop.hpp) calls the allocator: policies of static functions, so
// the loop inlines the calls (the process's malloc, the do-nothing allocator, either timed per
// call), the per-thread counts, and the clocks that turn timed calls into allocator time.
// Included by the engine only.
#pragma once
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <new>

#include "strata/platform/page.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace strata::replay::detail {

// ---- allocator policies: static functions, so the loop inlines the calls ----

// The process's allocator, by its standard entry points.
struct SystemPolicy {
  static void* malloc(std::size_t n) noexcept { return std::malloc(n); }
  static void* calloc(std::size_t n) noexcept { return std::calloc(n, 1); }
  static void* realloc(void* p, std::size_t n) noexcept { return std::realloc(p, n); }
  static void* memalign(std::size_t align, std::size_t n) noexcept {
    void* p = nullptr;
    if (align < sizeof(void*)) align = sizeof(void*);
    return ::posix_memalign(&p, align, n) == 0 ? p : nullptr;
  }
  static void* opNew(std::size_t n) noexcept { return ::operator new(n, std::nothrow); }
  static void* opNewAligned(std::size_t n, std::size_t align) noexcept {
    return ::operator new(n, std::align_val_t(align), std::nothrow);
  }
  static void free(void* p) noexcept { std::free(p); }
  static void opDelete(void* p) noexcept { ::operator delete(p); }
  static void opDeleteAligned(void* p, std::size_t align) noexcept {
    ::operator delete(p, std::align_val_t(align));
  }
};

// The do-nothing allocator: every allocation returns the same non-null, maximally aligned
// address; frees do nothing. Replaying on it measures the harness alone.
alignas(platform::kPageSize) inline unsigned char gNoneBlock[64];
struct NonePolicy {
  static void* malloc(std::size_t) noexcept { return gNoneBlock; }
  static void* calloc(std::size_t) noexcept { return gNoneBlock; }
  static void* realloc(void*, std::size_t) noexcept { return gNoneBlock; }
  static void* memalign(std::size_t, std::size_t) noexcept { return gNoneBlock; }
  static void* opNew(std::size_t) noexcept { return gNoneBlock; }
  static void* opNewAligned(std::size_t, std::size_t) noexcept { return gNoneBlock; }
  static void free(void*) noexcept {}
  static void opDelete(void*) noexcept {}
  static void opDeleteAligned(void*, std::size_t) noexcept {}
};

// ---- allocator time: a cheap clock around each allocator call (threaded replays) ----

// The clock: the time-stamp counter where there is one (a few ns to read), else the
// monotonic clock in ns. Ticks become seconds by a rate calibrated over the replay.
inline std::uint64_t ticks() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
#endif
}

// Ticks and calls spent in allocator calls by this thread since it last handed them over
// (collectAllocatorTime).
inline thread_local std::uint64_t tAllocTicks = 0;
inline thread_local std::uint64_t tAllocCalls = 0;

// P with each call timed. Only the call: waiting for another thread's object happens in the
// loop's lookup, before the call, and is not counted.
template <class P>
struct Timed {
  template <class F>
  static auto timed(F&& f) noexcept {
    const std::uint64_t t0 = ticks();
    auto r = f();
    tAllocTicks += ticks() - t0;
    ++tAllocCalls;
    return r;
  }
  template <class F>
  static void timedVoid(F&& f) noexcept {
    const std::uint64_t t0 = ticks();
    f();
    tAllocTicks += ticks() - t0;
    ++tAllocCalls;
  }
  static void* malloc(std::size_t n) noexcept { return timed([&] { return P::malloc(n); }); }
  static void* calloc(std::size_t n) noexcept { return timed([&] { return P::calloc(n); }); }
  static void* realloc(void* p, std::size_t n) noexcept { return timed([&] { return P::realloc(p, n); }); }
  static void* memalign(std::size_t a, std::size_t n) noexcept {
    return timed([&] { return P::memalign(a, n); });
  }
  static void* opNew(std::size_t n) noexcept { return timed([&] { return P::opNew(n); }); }
  static void* opNewAligned(std::size_t n, std::size_t a) noexcept {
    return timed([&] { return P::opNewAligned(n, a); });
  }
  static void free(void* p) noexcept { timedVoid([&] { P::free(p); }); }
  static void opDelete(void* p) noexcept { timedVoid([&] { P::opDelete(p); }); }
  static void opDeleteAligned(void* p, std::size_t a) noexcept {
    timedVoid([&] { P::opDeleteAligned(p, a); });
  }
};

// The clock's own cost per timed call, in ticks: timed calls of the do-nothing allocator
// (the median of a few batches, so one preempted batch does not count).
inline double clockOverheadTicks() noexcept {
  double batch[7];
  for (double& b : batch) {
    tAllocTicks = tAllocCalls = 0;
    for (int i = 0; i < 4096; ++i) {
      void* p = Timed<NonePolicy>::malloc(16);
      __asm__ volatile("" : : "r"(p) : "memory");
    }
    b = static_cast<double>(tAllocTicks) / static_cast<double>(tAllocCalls);
  }
  tAllocTicks = tAllocCalls = 0;
  std::sort(std::begin(batch), std::end(batch));
  return batch[3];
}

// What one replay thread counted; padded so threads do not share a cache line.
struct alignas(64) ThreadCounts {
  std::uint64_t failedAllocations = 0;
  std::uint64_t verifyErrors = 0;
  std::uint64_t allocTicks = 0;  // timed replays: ticks inside allocator calls
  std::uint64_t allocCalls = 0;  // and the number of calls timed
};

// Moves this thread's allocator time into c (after each window it replays).
inline void collectAllocatorTime(ThreadCounts& c) noexcept {
  c.allocTicks += tAllocTicks;
  c.allocCalls += tAllocCalls;
  tAllocTicks = tAllocCalls = 0;
}

inline double monotonicSeconds() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The tick counter against the monotonic clock over the replay: the rate that turns the ticks
// counted inside allocator calls into seconds.
struct TickSpan {
  std::uint64_t ticks0 = 0, ticks1 = 0;
  double mono0 = 0, mono1 = 0;

  void start() noexcept {
    ticks0 = ticks();
    mono0 = monotonicSeconds();
  }
  void stop() noexcept {
    ticks1 = ticks();
    mono1 = monotonicSeconds();
  }
  // The time inside allocator calls the counts hold, less the clock's own cost per timed call;
  // 0 when either clock did not advance.
  template <class Counts>
  double allocatorSeconds(const Counts& counts, double overheadTicks) const noexcept {
    if (!(mono1 > mono0 && ticks1 > ticks0)) return 0;
    const double rate = static_cast<double>(ticks1 - ticks0) / (mono1 - mono0);
    double t = 0, calls = 0;
    for (const ThreadCounts& c : counts) {
      t += static_cast<double>(c.allocTicks);
      calls += static_cast<double>(c.allocCalls);
    }
    return std::max(0.0, t - calls * overheadTicks) / rate;
  }
};

}  // namespace strata::replay::detail
