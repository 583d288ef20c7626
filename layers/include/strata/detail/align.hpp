// Size and alignment arithmetic shared by every layer. Each helper that can overflow
// reports it instead of wrapping, so that a request near SIZE_MAX becomes nullptr.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>

namespace strata::detail {

constexpr bool is_pow2(std::size_t a) noexcept { return a != 0 && (a & (a - 1)) == 0; }

// Rounds n up to a multiple of the power of two a; a is trusted.
constexpr std::size_t align_up(std::size_t n, std::size_t a) noexcept {
  return (n + a - 1) & ~(a - 1);
}

// Rounds n up to a multiple of a, returning false (and leaving out alone) on overflow.
constexpr bool checked_align_up(std::size_t n, std::size_t a, std::size_t& out) noexcept {
  if (n > SIZE_MAX - (a - 1)) return false;
  out = align_up(n, a);
  return true;
}

// out = a + b, false on overflow.
constexpr bool checked_add(std::size_t a, std::size_t b, std::size_t& out) noexcept {
  return !__builtin_add_overflow(a, b, &out);
}

// out = a * b, false on overflow.
constexpr bool checked_mul(std::size_t a, std::size_t b, std::size_t& out) noexcept {
  return !__builtin_mul_overflow(a, b, &out);
}

inline bool is_aligned(const void* p, std::size_t a) noexcept {
  return (reinterpret_cast<std::uintptr_t>(p) & (a - 1)) == 0;
}

inline std::byte* bytes(void* p) noexcept { return static_cast<std::byte*>(p); }

}  // namespace strata::detail
