// Hex numbers as the importers' text formats write them (mtrace's "0x1f", heaptrack's "1f"):
// the digits alone, either case, at most 16.
#pragma once
#include <cstdint>
#include <string_view>

namespace strata::tracetools {

// Parses 1 to 16 hex digits into v; false when t is empty, too long or holds another char.
inline bool parseHexDigits(std::string_view t, std::uint64_t& v) {
  if (t.empty() || t.size() > 16) return false;
  v = 0;
  for (const char c : t) {
    unsigned d;
    if (c >= '0' && c <= '9') {
      d = static_cast<unsigned>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      d = static_cast<unsigned>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      d = static_cast<unsigned>(c - 'A' + 10);
    } else {
      return false;
    }
    v = (v << 4) | d;
  }
  return true;
}

}  // namespace strata::tracetools
