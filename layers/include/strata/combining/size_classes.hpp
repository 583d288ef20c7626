// Size-class policies for the segregated heaps: size2class maps a request to the smallest
// class that holds it, class2size gives a class's object size. Both are constexpr and a few
// instructions, so a seg heap's class lookup inlines to straight-line code.
#pragma once
#include <bit>
#include <cstddef>

#include "strata/concepts.hpp"

namespace strata {

// Power-of-two classes starting at 2^MinShift bytes (Kingsley's rounding).
// size2class is one bit_width (lzcnt) and a subtract.
template <unsigned MinShift = 4>
struct PowerOfTwoClasses {
  static constexpr unsigned size2class(std::size_t n) noexcept {
    return n <= (std::size_t{1} << MinShift)
               ? 0u
               : static_cast<unsigned>(std::bit_width(n - 1)) - MinShift;
  }
  static constexpr std::size_t class2size(unsigned c) noexcept {
    return std::size_t{1} << (c + MinShift);
  }
  // The largest class whose size is at most n (class 0 below it): one bit_width, no branch.
  static constexpr unsigned floorClass(std::size_t n) noexcept {
    return static_cast<unsigned>(std::bit_width(n | (std::size_t{1} << MinShift))) - 1 -
           MinShift;
  }
};

// Exact classes every Step bytes: Step, 2*Step, 3*Step, ... (Lea's quick lists).
template <std::size_t Step = 16>
struct LinearClasses {
  static constexpr unsigned size2class(std::size_t n) noexcept {
    return n <= Step ? 0u : static_cast<unsigned>((n - 1) / Step);
  }
  static constexpr std::size_t class2size(unsigned c) noexcept { return (c + 1) * Step; }
};

}  // namespace strata
