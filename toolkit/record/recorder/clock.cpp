// The recorder's clock (clock.hpp): choosing it and calibrating the TSC conversion.
#include "record/recorder/clock.hpp"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <algorithm>

namespace strata::record {

constinit Clock gClock;

namespace {

constexpr uint64_t kFirstCalibrationNs = 1000000;
constexpr uint64_t kCalibrationPeriodNs = 50000000;

// A TSC reading and CLOCK_MONOTONIC at nearly the same moment: of three tries, the one whose
// two TSC reads around the clock_gettime lie closest together.
void referencePoint(uint64_t* tsc, uint64_t* ns) {
  uint64_t best = ~uint64_t{0};
  for (int i = 0; i < 3; ++i) {
    const uint64_t before = readTsc();
    const uint64_t n = kernelNs(CLOCK_MONOTONIC);
    const uint64_t after = readTsc();
    if (after - before < best) {
      best = after - before;
      *tsc = before + (after - before) / 2;
      *ns = n;
    }
  }
}

}  // namespace

bool tscUsable() noexcept {
#if defined(__x86_64__)
  unsigned a, b, c, d;
  if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u) return false;
  __get_cpuid(0x80000007u, &a, &b, &c, &d);
  if ((d & (1u << 8)) == 0) return false;  // no invariant TSC
  const int fd = ::open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                        O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[16] = {};
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  return n >= 3 && ::strncmp(buf, "tsc", 3) == 0 && (n == 3 || buf[3] == '\n');
#else
  return false;
#endif
}

void startClock(ClockKind kind) noexcept {
  gClock.kind = kind;
  if (kind != ClockKind::kTsc) return;
  referencePoint(&gClock.startTsc, &gClock.startNs);
  gClock.nextCalibrationNs = gClock.startNs + kFirstCalibrationNs;
}

void calibrateTsc() noexcept {
  uint64_t tsc, ns;
  referencePoint(&tsc, &ns);
  const uint64_t dt = tsc - gClock.startTsc, dn = ns - gClock.startNs;
  if (tsc <= gClock.startTsc || dn < kFirstCalibrationNs) {
    gClock.nextCalibrationNs = gClock.startNs + kFirstCalibrationNs;
    return;
  }
  gClock.nextCalibrationNs = ns + kCalibrationPeriodNs;
  const auto mult = static_cast<uint64_t>((static_cast<unsigned __int128>(dn) << 32) / dt);
  const uint64_t oldMult = gClock.mult.load(std::memory_order_relaxed);
  uint64_t start = ns;
  if (oldMult != 0) {
    start = std::max(start, tscToNs(tsc, gClock.tsc0.load(std::memory_order_relaxed),
                                    gClock.ns0.load(std::memory_order_relaxed), oldMult));
  }
  const uint64_t s = gClock.seq.load(std::memory_order_relaxed);
  gClock.seq.store(s + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  gClock.tsc0.store(tsc, std::memory_order_relaxed);
  gClock.ns0.store(start, std::memory_order_relaxed);
  gClock.mult.store(mult, std::memory_order_relaxed);
  gClock.seq.store(s + 2, std::memory_order_release);
}

}  // namespace strata::record
