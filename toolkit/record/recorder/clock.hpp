// The recorder's clock: what every event is stamped with. One of three, chosen by
// STRATA_TRACE_CLOCK (docs/toolkit/recording.md):
// - tsc (the default, when usable): the CPU's time-stamp counter, converted to CLOCK_MONOTONIC
//   nanoseconds. rdtsc is much cheaper than the vDSO's CLOCK_MONOTONIC (which reads the same
//   counter, plus the kernel's conversion data, and under a hypervisor more), and the clock
//   was the recorder's largest single cost. Usable when the CPU's TSC is invariant (constant
//   rate, not stopped in sleep states) and the kernel itself keeps time with it (its
//   clocksource is "tsc"), so that the TSC is trusted to agree across CPUs. Otherwise the
//   fine clock is used. Only with it do threads log into rings (rings.hpp): their stamps
//   must be comparable across threads.
// - fine: CLOCK_MONOTONIC, through the vDSO.
// - coarse: CLOCK_MONOTONIC_COARSE, cheaper but advancing only every kernel tick (1-4 ms).
//
// The TSC -> nanoseconds conversion is ns = ns0 + ((tsc - tsc0) * mult) >> 32, with mult = 0
// until the first calibration (then the fine clock stands in). The first calibration waits
// for 1 ms to have passed (no start-up delay); then it is recalibrated every 50 ms of run
// time against the whole time since the start, so its rate error shrinks as the program runs
// and its offset from CLOCK_MONOTONIC stays within a few microseconds; it never steps back.
#pragma once
#include <stdint.h>
#include <sys/single_threaded.h>
#include <time.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include <atomic>

namespace strata::record {

enum class ClockKind : int { kFine, kCoarse, kTsc };

// The clock's state: every field is read-mostly (written at start and at each calibration),
// so the line stays in every core's cache.
// - kind: set at start.
// - seq, tsc0, ns0, mult: the conversion, written under the recorder's lock by
//   calibrateTsc() and read by every thread without it, so guarded by a sequence count (odd
//   while an update is under way); a reader that meets an update reads the fine clock
//   instead of waiting, as the update may be on its own thread, under a signal handler.
// - startTsc, startNs, nextCalibrationNs: calibration state, under the recorder's lock (the
//   fine and coarse clocks never calibrate: nextCalibrationNs stays ~0).
struct alignas(64) Clock {
  ClockKind kind = ClockKind::kFine;
  std::atomic<uint64_t> seq{0};
  std::atomic<uint64_t> tsc0{0};
  std::atomic<uint64_t> ns0{0};
  std::atomic<uint64_t> mult{0};
  uint64_t startTsc = 0;
  uint64_t startNs = 0;
  uint64_t nextCalibrationNs = ~uint64_t{0};
};
[[gnu::visibility("hidden")]] extern Clock gClock;

// Whether the tsc clock can be used here (see above). Reads sysfs with plain system calls.
bool tscUsable() noexcept;

// Sets the clock kind; for the tsc clock, takes the reference point the calibrations
// measure from (the first calibration is due 1 ms later).
void startClock(ClockKind kind) noexcept;

// (Re)computes the TSC conversion from the time since startClock(), under the recorder's
// lock. The new conversion starts where the old one is now, or at CLOCK_MONOTONIC if that is
// later, so the clock never steps back.
void calibrateTsc() noexcept;

// Calls calibrateTsc() when it is due at time t (under the recorder's lock).
inline void calibrateIfDue(uint64_t t) {
  if (t >= gClock.nextCalibrationNs) [[unlikely]]
    calibrateTsc();
}

// Nanoseconds on the kernel clock c.
inline uint64_t kernelNs(clockid_t c) {
  struct timespec ts;
  ::clock_gettime(c, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

#if defined(__x86_64__)
inline uint64_t readTsc() { return __rdtsc(); }
#else
inline uint64_t readTsc() { return 0; }
#endif

// tsc converted with the given parameters.
inline uint64_t tscToNs(uint64_t tsc, uint64_t tsc0, uint64_t ns0, uint64_t mult) {
  const uint64_t d = tsc > tsc0 ? tsc - tsc0 : 0;
  return ns0 + static_cast<uint64_t>((static_cast<unsigned __int128>(d) * mult) >> 32);
}

// tsc converted with the current conversion, read without the sequence check: under the
// recorder's lock, which every update of it holds too (the ring merge).
inline uint64_t tscToNsLocked(uint64_t tsc) {
  return tscToNs(tsc, gClock.tsc0.load(std::memory_order_relaxed),
                 gClock.ns0.load(std::memory_order_relaxed),
                 gClock.mult.load(std::memory_order_relaxed));
}

// Whether the tsc conversion has been calibrated (ring events can be converted).
inline bool tscCalibrated() { return gClock.mult.load(std::memory_order_relaxed) != 0; }

// The tsc clock now, into *out; false when it is not calibrated or being recalibrated.
inline bool tscNs(uint64_t* out) {
  const uint64_t s = gClock.seq.load(std::memory_order_acquire);
  const uint64_t tsc0 = gClock.tsc0.load(std::memory_order_relaxed);
  const uint64_t ns0 = gClock.ns0.load(std::memory_order_relaxed);
  const uint64_t mult = gClock.mult.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  if ((s & 1) != 0 || gClock.seq.load(std::memory_order_relaxed) != s || mult == 0) return false;
  *out = tscToNs(readTsc(), tsc0, ns0, mult);
  return true;
}

// Nanoseconds on the chosen clock (not under the lock: each call stamps its event before
// taking it).
inline uint64_t nowNs() {
  if (gClock.kind == ClockKind::kTsc) {
    uint64_t t;
    if (tscNs(&t)) return t;
  }
  return kernelNs(gClock.kind == ClockKind::kCoarse ? CLOCK_MONOTONIC_COARSE : CLOCK_MONOTONIC);
}

// A ring event's raw TSC stamp. A create's is read after every earlier instruction has
// completed (LFENCE), so after the real malloc's loads (which may have found another
// thread's freed block). A release's needs no fence: it is stored into the ring before the
// real free's own stores, x86 makes stores visible in program order, and so any thread that
// gets the block reads its clock after this stamp was taken. A single-threaded process needs
// no fence (no other thread can get the block, and glibc clears __libc_single_threaded before
// a second thread starts): the fence would make every create wait for the real malloc's
// cache misses to be over instead of overlapping them with what follows.
inline uint64_t stampTsc(bool create) {
#if defined(__x86_64__)
  if (create && !__libc_single_threaded) _mm_lfence();
  return __rdtsc();
#else
  (void)create;
  return 0;
#endif
}

}  // namespace strata::record
