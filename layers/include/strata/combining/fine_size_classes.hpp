// FineSizeClasses: size classes 16 bytes apart up to 16 * PerDoubling bytes, then PerDoubling
// classes per power of two (12.5 % apart for the default 8), up to MaxSize.
//
// Why: a class wastes at most one spacing per object, so fine classes keep the resident size
// close to what a boundary-tag allocator such as glibc needs, while a per-class page still
// needs no header. size2class is a compare, a bit_width (lzcnt), two shifts and two adds;
// class2size is the same backwards. Both are constexpr, so tables are built at compile time.
#pragma once
#include <bit>
#include <cstddef>

#include "strata/concepts.hpp"

namespace strata {

template <unsigned PerDoublingShift = 3, std::size_t MaxSize = std::size_t{128} << 10>
struct FineSizeClasses {
  static constexpr std::size_t PerDoubling = std::size_t{1} << PerDoublingShift;
  // Below and at Linear bytes the classes are every 16 bytes.
  static constexpr unsigned LinearShift = PerDoublingShift + 4;
  static constexpr std::size_t Linear = std::size_t{1} << LinearShift;
  static_assert(std::has_single_bit(MaxSize) && MaxSize >= Linear);

  // The smallest class whose size is at least n (n = 0 counts as 1).
  static constexpr unsigned size2class(std::size_t n) noexcept {
    if (n <= Linear) return n <= 16 ? 0u : static_cast<unsigned>((n + 15) / 16 - 1);
    const unsigned e = static_cast<unsigned>(std::bit_width(n - 1)) - 1;  // 2^e < n <= 2^(e+1)
    const unsigned sub =
        static_cast<unsigned>(((n - 1) >> (e - PerDoublingShift)) & (PerDoubling - 1));
    return static_cast<unsigned>(Linear / 16) + (e - LinearShift) * unsigned{PerDoubling} + sub;
  }

  static constexpr std::size_t class2size(unsigned c) noexcept {
    if (c < Linear / 16) return (std::size_t{c} + 1) * 16;
    const unsigned j = c - static_cast<unsigned>(Linear / 16);
    const unsigned e = LinearShift + j / unsigned{PerDoubling};
    return (std::size_t{1} << e) + (std::size_t{j % PerDoubling} + 1) * (std::size_t{1} << (e - PerDoublingShift));
  }

  // How many classes there are; the last one is MaxSize.
  static constexpr unsigned Count = size2class(MaxSize) + 1;
  static constexpr std::size_t MaxClassSize = MaxSize;
};

static_assert(SizeClasses<FineSizeClasses<>>);

}  // namespace strata
