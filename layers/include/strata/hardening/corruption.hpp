// What the hardening layers do when they find the heap misused: one line on standard error
// naming the kind and the address, then abort() (SIGABRT, a core dump where enabled). The
// process never continues past a detected corruption, as Scudo and hardened_malloc do not:
// the damage may reach beyond the object, and an attacker who can retry learns from each try.
//
// The line is written from a stack buffer (platform::writeStderr): reporting never allocates
// (the heap reporting may be the process's malloc, and it is damaged).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "strata/platform/output.hpp"

namespace strata {

// The kinds of misuse a hardening layer reports.
enum class HeapCorruption {
  DoubleFree,      // free (or realloc) of an object already freed
  InvalidFree,     // free of a pointer no object starts at, or whose header was overwritten
  ForeignPointer,  // free of an address outside every mapping of the heap
  Overflow,        // the canary after an object was overwritten
  WriteAfterFree,  // a freed object's fill changed while it waited to be reused
  FreeListLink,    // a free block's encoded link no longer decodes (a write after free over it)
};

constexpr const char* heapCorruptionName(HeapCorruption k) noexcept {
  switch (k) {
    case HeapCorruption::DoubleFree: return "double free";
    case HeapCorruption::InvalidFree: return "invalid free or damaged header";
    case HeapCorruption::ForeignPointer: return "free of a pointer not from this heap";
    case HeapCorruption::Overflow: return "overflow past the end of an object";
    case HeapCorruption::WriteAfterFree: return "write after free";
    case HeapCorruption::FreeListLink: return "write after free over a free-list link";
  }
  return "heap corruption";
}

namespace detail {

// "0x" and the address in hex into out (at least 19 bytes); returns the length.
inline std::size_t formatAddress(const void* p, char* out) noexcept {
  const auto v = reinterpret_cast<std::uintptr_t>(p);
  out[0] = '0';
  out[1] = 'x';
  int digits = 1;
  while (digits < 16 && (v >> (4 * digits)) != 0) ++digits;
  for (int i = 0; i < digits; ++i) out[2 + i] = "0123456789abcdef"[(v >> (4 * (digits - 1 - i))) & 15];
  return 2 + static_cast<std::size_t>(digits);
}

}  // namespace detail

// "strata: <kind> at <address>" on standard error, then abort().
[[noreturn]] inline void reportHeapCorruption(HeapCorruption kind, const void* at) noexcept {
  char line[128];
  std::size_t n = 0;
  auto put = [&](const char* s) {
    while (*s != '\0' && n < sizeof line - 24) line[n++] = *s++;
  };
  put("strata: ");
  put(heapCorruptionName(kind));
  put(" at ");
  n += detail::formatAddress(at, line + n);
  line[n++] = '\n';
  platform::writeStderr(line, n);
  std::abort();
}

}  // namespace strata
