// Numbers and sizes as the toolkit's reports print them, said once: printf into a string,
// figures with as many decimals as they need, counts with thousands separators, byte sizes
// (in MiB, in the unit that suits them, with or without the exact count), padding for columns.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace strata::support {

// printf into a std::string, whatever its length.
template <class... Args>
std::string format(const char* fmt, Args... args) {
  char buf[256];
  const int n = std::snprintf(buf, sizeof buf, fmt, args...);
  if (n < 0) return {};
  if (static_cast<std::size_t>(n) < sizeof buf) return std::string(buf, static_cast<std::size_t>(n));
  std::vector<char> big(static_cast<std::size_t>(n) + 1);
  std::snprintf(big.data(), big.size(), fmt, args...);
  return std::string(big.data(), static_cast<std::size_t>(n));
}

inline constexpr double kMiB = 1024.0 * 1024.0;

// The printf format for figures whose smallest is `v`: one decimal from 10 up, two from 1,
// three below ("123.4", "2.41", "0.052"), so small figures do not show as 0.0.
inline const char* decimalsFor(double v) {
  return v >= 10 || v <= 0 ? "%.1f" : v >= 1 ? "%.2f" : "%.3f";
}

// One figure with the decimals decimalsFor() gives it.
inline std::string threeDigits(double v) { return format(decimalsFor(v), v); }

// An integer with thousands separators ("1,234,567"), for counts a reader compares by eye.
inline std::string grouped(std::uint64_t v) {
  std::string digits = std::to_string(v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// Bytes in MiB with a printf format for the figure ("%.1f": "12.3"; "%+.1f": "+1.5").
inline std::string mib(double bytes, const char* fmt = "%.1f") { return format(fmt, bytes / kMiB); }

// Bytes in the binary unit that suits them, one decimal from KiB up, whole bytes below:
// "12 B", "1.5 KiB", "-48.0 MiB".
inline std::string scaledBytes(double v) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  double x = v < 0 ? -v : v;
  while (x >= 1024.0 && u < 4) x /= 1024.0, ++u;
  return u == 0 ? format("%s%.0f B", v < 0 ? "-" : "", x)
                : format("%s%.1f %s", v < 0 ? "-" : "", x, units[u]);
}

// scaledBytes with the exact count beside it from 1 KiB up: "48.0 MiB (50,331,648 B)".
inline std::string scaledBytesExact(std::uint64_t v) {
  const std::string scaled = scaledBytes(static_cast<double>(v));
  return v < 1024 ? scaled : scaled + " (" + grouped(v) + " B)";
}

// The exact count first, a readable size beside large ones: "12345 B (12.1 KiB)" from 10 KiB,
// in MiB from 10 MiB.
inline std::string exactBytesScaled(std::uint64_t b) {
  const unsigned long long n = b;
  const double d = static_cast<double>(b);
  if (b < 10 * 1024) return format("%llu B", n);
  if (b < 10ull * 1024 * 1024) return format("%llu B (%.1f KiB)", n, d / 1024);
  return format("%llu B (%.1f MiB)", n, d / kMiB);
}

// Pads `s` to `width` on the left (right-aligned) or the right (left-aligned).
inline std::string pad(const std::string& s, std::size_t width, bool right) {
  if (s.size() >= width) return s;
  const std::string fill(width - s.size(), ' ');
  return right ? fill + s : s + fill;
}

}  // namespace strata::support
