// The clock the purge policy reads: coarse, monotonic and cheap, because the slow paths of
// StrataHeap look at it on every refill that may purge.
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

}  // namespace strata::platform
