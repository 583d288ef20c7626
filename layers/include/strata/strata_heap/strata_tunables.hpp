// StrataTunables: the run-time policy of StrataHeap's layers (how long freed memory stays
// committed, how much a heap may keep, where huge objects start, what the caches hold), and
// the reader of the STRATA_* environment variables that libstrata.so applies at start-up.
//
// Why run time: the right purge delay or cache size depends on the program (a service that
// idles wants memory back quickly, a batch job wants none of the system calls), and users tune
// allocators by environment (MALLOC_CONF, MIMALLOC_*, GLIBC_TUNABLES) without rebuilding.
// The size classes stay a template parameter: they are constants on the malloc fast path.
#pragma once
#include <cstddef>
#include <cstdint>

#include "strata/platform/output.hpp"
#include "strata/platform/process.hpp"

namespace strata {

struct StrataTunables {
  // Released memory beyond a heap's allowance stays committed this long (ms) before it is
  // decommitted; 0 gives it back at the next slow path.
  std::uint64_t purgeDelayMs = 250;
  // Released slots (of SlotSize bytes) a heap keeps committed for good, plus 1/8 of its used
  // ones: churn around a small live size costs no system calls.
  std::size_t dirtySlots = 4;
  // A heap holding more than this released purges it all at once, delay or not.
  std::size_t maxDelayedBytes = std::size_t{512} << 20;
  // Requests above this many bytes get a mapping of their own (0: the largest a segment's
  // page can hold).
  std::size_t hugeThreshold = 0;
  // Freed huge mappings kept for reuse (for the purge delay): at most this many, this many
  // committed bytes in all.
  std::size_t hugeCacheChunks = 16;
  std::size_t hugeCacheBytes = std::size_t{128} << 20;
  // Empty segments any thread can take, kept committed for the purge delay.
  std::size_t segmentCache = 128;
};

namespace detail {

// One line on stderr, without allocating (this runs inside the first malloc).
inline void tunableWarning(const char* name, const char* value, const char* range) noexcept {
  const char* parts[] = {"strata: ignoring ", name, "=", value, " (", range, "); using the default\n"};
  for (const char* s : parts) {
    std::size_t n = 0;
    while (s[n] != '\0') ++n;
    if (!platform::writeStderr(s, n)) return;
  }
}

// Parses a size: digits with an optional K, M or G suffix (powers of 1024). False for
// anything else or a value above max.
inline bool parseTunable(const char* s, std::uint64_t max, bool sizeSuffix, std::uint64_t& out) noexcept {
  std::uint64_t v = 0;
  const char* p = s;
  if (*p == '\0') return false;
  for (; *p >= '0' && *p <= '9'; ++p) {
    if (v > (~std::uint64_t{0} - 9) / 10) return false;
    v = v * 10 + static_cast<std::uint64_t>(*p - '0');
  }
  if (p == s) return false;
  unsigned shift = 0;
  if (sizeSuffix && *p != '\0') {
    switch (*p | 0x20) {
      case 'k': shift = 10; break;
      case 'm': shift = 20; break;
      case 'g': shift = 30; break;
      default: return false;
    }
    ++p;
    if ((*p | 0x20) == 'i') ++p;
    if ((*p | 0x20) == 'b') ++p;
  }
  if (*p != '\0' || v > (max >> shift)) return false;
  out = v << shift;
  return true;
}

template <class T>
void readTunable(const char* name, T& field, std::uint64_t min, std::uint64_t max, bool size,
                 const char* range) noexcept {
  const char* s = platform::environmentValue(name);
  if (s == nullptr) return;
  std::uint64_t v = 0;
  if (parseTunable(s, max, size, v) && v >= min) {
    field = static_cast<T>(v);
  } else {
    tunableWarning(name, s, range);
  }
}

}  // namespace detail

// The defaults with every STRATA_* variable that is set applied (docs/layers/malloc.md: "Tuning
// libstrata.so"). A bad value prints one line naming the variable and keeps the default.
inline StrataTunables tunablesFromEnvironment() noexcept {
  StrataTunables t;
  detail::readTunable("STRATA_PURGE_DELAY_MS", t.purgeDelayMs, 0, 3'600'000, false, "0..3600000");
  detail::readTunable("STRATA_DIRTY_SLOTS", t.dirtySlots, 0, 4096, false, "0..4096");
  detail::readTunable("STRATA_MAX_DELAYED", t.maxDelayedBytes, 0, std::uint64_t{1} << 40, true,
                      "a size up to 1T, such as 512M");
  detail::readTunable("STRATA_HUGE_THRESHOLD", t.hugeThreshold, 128 << 10, std::uint64_t{1} << 30,
                      true, "a size from 128K to 1G; above the largest span it changes nothing");
  detail::readTunable("STRATA_HUGE_CACHE_CHUNKS", t.hugeCacheChunks, 0, 64, false, "0..64");
  detail::readTunable("STRATA_HUGE_CACHE", t.hugeCacheBytes, 0, std::uint64_t{1} << 40, true,
                      "a size up to 1T, such as 128M");
  detail::readTunable("STRATA_SEGMENT_CACHE", t.segmentCache, 0, 256, false, "0..256");
  return t;
}

}  // namespace strata
