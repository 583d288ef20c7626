// MallocStats: what a heap tells mallinfo2 and malloc_stats, and how the shim reports it:
// mallinfo2's fields, and malloc_stats's text in glibc's layout, written to stderr without
// allocating (a stack buffer and platform::writeStderr: the caller may be the allocator itself).
#pragma once
#include <malloc.h>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdio>

#include "strata/platform/output.hpp"

namespace strata {

// What mallinfo2 and malloc_stats report, when the heap has stats().
struct MallocStats {
  std::size_t bytesFromSystem = 0;      // held from the system now (mappings, committed break)
  std::size_t bytesInUse = 0;           // usable bytes of live objects
  std::size_t peakBytesFromSystem = 0;  // the most ever held from the system
};

// A heap whose stats() returns MallocStats or any struct with the same three fields.
template <class H>
concept ReportsMallocStats = requires(H& h) {
  { h.stats().bytesFromSystem } -> std::convertible_to<std::size_t>;
  { h.stats().bytesInUse } -> std::convertible_to<std::size_t>;
  { h.stats().peakBytesFromSystem } -> std::convertible_to<std::size_t>;
};

namespace detail {

// arena: bytes from the system; uordblks: in use; fordblks: the difference; usmblks: the
// peak from the system (glibc leaves it 0).
inline struct mallinfo2 toMallinfo2(const MallocStats& s) noexcept {
  struct mallinfo2 info {};
  info.arena = s.bytesFromSystem;
  info.uordblks = s.bytesInUse;
  info.fordblks = s.bytesFromSystem > s.bytesInUse ? s.bytesFromSystem - s.bytesInUse : 0;
  info.usmblks = s.peakBytesFromSystem;
  return info;
}

// Prints s on stderr in glibc's malloc_stats layout.
inline void printMallocStats(const MallocStats& s) noexcept {
  char text[256];
  const int len = std::snprintf(text, sizeof text,
                                "Arena 0:\nsystem bytes     = %10zu\nin use bytes     = %10zu\n"
                                "Total (incl. mmap):\nsystem bytes     = %10zu\n"
                                "in use bytes     = %10zu\nmax system bytes = %10zu\n",
                                s.bytesFromSystem, s.bytesInUse, s.bytesFromSystem,
                                s.bytesInUse, s.peakBytesFromSystem);
  if (len > 0) platform::writeStderr(text, std::min(static_cast<std::size_t>(len), sizeof text - 1));
}

}  // namespace detail
}  // namespace strata
