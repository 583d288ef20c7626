// Runs of set bits in a 64-bit mask (one bit per slot of a segment): SegmentSlots' search
// for free runs. Each is a handful of shifts, ands and a count of zeros.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>

namespace strata::detail {

// n bits set from bit `first` on (n <= 64, first + n <= 64).
inline std::uint64_t spanMask(std::size_t first, std::size_t n) noexcept {
  return (n == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1) << first;
}

// The first run of n set bits starting at bit `from` or later, or -1: log2(n) shift-and-ands
// (bit i survives when bits i..i+n-1 are all set) and a count of trailing zeros.
inline int findRun(std::uint64_t m, std::size_t n, std::size_t from) noexcept {
  for (std::size_t have = 1; have < n && m != 0;) {
    const std::size_t step = have < n - have ? have : n - have;
    m &= m >> step;
    have += step;
  }
  m &= ~std::uint64_t{0} << from;
  return m == 0 ? -1 : std::countr_zero(m);
}

// The longest run of set bits: each shift-and-and shortens every run by one.
inline std::size_t longestRun(std::uint64_t m) noexcept {
  std::size_t n = 0;
  for (; m != 0; ++n) m &= m >> 1;
  return n;
}

}  // namespace strata::detail
