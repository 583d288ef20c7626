// Formatting helpers shared by compare's report files (compare_report.cpp and
// compare_command_report.cpp) and `strata stats`'s table: printf into a string, figures with as many decimals as they
// need, padding.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "tracetools/trace_stats.hpp"

namespace strata::compare::reportfmt {


// printf into a std::string.
template <class... Args>
inline std::string format(const char* fmt, Args... args) {
  char buf[256];
  const int n = std::snprintf(buf, sizeof buf, fmt, args...);
  const std::size_t len = n < 0 ? 0 : static_cast<std::size_t>(n);
  return std::string(buf, std::min(len, sizeof buf - 1));
}

// The printf format for figures whose smallest is `v`: one decimal from 10 up, two from 1,
// three below ("123.4", "2.41", "0.052"), so small traces do not show as 0.0.
inline const char* decimalsFor(double v) { return v >= 10 || v <= 0 ? "%.1f" : v >= 1 ? "%.2f" : "%.3f"; }

// One figure with the decimals decimalsFor() gives it.
inline std::string threeDigits(double v) { return format(decimalsFor(v), v); }

constexpr double kMiB = 1024.0 * 1024.0;

// An integer with thousands separators ("1,234,567"), for counts a reader compares by eye.
inline std::string grouped(std::uint64_t v) {
  std::string digits = std::to_string(v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// Pads `s` to `width` on the left (right-aligned) or the right (left-aligned).
inline std::string pad(const std::string& s, std::size_t width, bool right) {
  if (s.size() >= width) return s;
  const std::string fill(width - s.size(), ' ');
  return right ? fill + s : s + fill;
}


}  // namespace strata::compare::reportfmt
