// The clocks the layers read: a coarse one for the purge policy, cheap because the slow paths
// of StrataHeap look at it on every refill that may purge; and a fine one, for the hardening
// layers' last-resort seed (random.hpp says when).
#pragma once
#include <time.h>

#include <cstdint>

namespace strata::platform {

// Milliseconds of CLOCK_MONOTONIC_COARSE: a vDSO read of the last tick, no system call.
inline std::uint64_t nowMs() noexcept {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000 +
         static_cast<std::uint64_t>(ts.tv_nsec) / 1'000'000;
}

// The nanoseconds within the current second of CLOCK_MONOTONIC (0 when the clock cannot be
// read): the part of the time that changes fastest, a vDSO read.
inline std::uint64_t nowSubsecondNs() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace strata::platform
