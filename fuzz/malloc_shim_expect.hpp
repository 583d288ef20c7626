// What glibc answers for one allocation call, as the malloc shim fuzzer compares it: success,
// failure with ENOMEM or EINVAL, or either success or ENOMEM where the answer depends on the
// machine's memory. The fuzzer's own malloc is ASan's (it intercepts the plain names and
// __libc_memalign), so glibc is not called: its 2.36 semantics are encoded here, from
// malloc/malloc.c (_mid_memalign, __posix_memalign, __libc_pvalloc, checked_request2size),
// except where the shim documents a different contract (aligned_alloc, see
// strata/shim/malloc_shim.hpp), which these functions follow and say so.
#pragma once
#include <cstddef>
#include <cstdint>

namespace strata::fuzz {

enum class Outcome { kOk, kNoMem, kInval, kOkOrNoMem };

// Sizes and alignments up to this always fit (the fuzzer frees big objects at once).
inline constexpr std::size_t kSurelyFits = std::size_t{64} << 20;
// Beyond this no request fits: x86-64 user space is 2^47 bytes (4-level paging).
inline constexpr std::size_t kNeverFits = std::size_t{1} << 47;

// n bytes aligned to align (a power of two, at least 16).
inline Outcome sized(std::size_t n, std::size_t align) {
  if (n > PTRDIFF_MAX) return Outcome::kNoMem;  // checked_request2size
  if (n <= kSurelyFits && align <= kSurelyFits) return Outcome::kOk;
  std::size_t total;
  if (__builtin_add_overflow(n, align, &total) || total > kNeverFits) return Outcome::kNoMem;
  return Outcome::kOkOrNoMem;
}

inline Outcome mallocOutcome(std::size_t n) { return sized(n, 16); }

inline Outcome callocOutcome(std::size_t n, std::size_t m) {
  std::size_t total;
  if (__builtin_mul_overflow(n, m, &total)) return Outcome::kNoMem;
  return sized(total, 16);
}

// The power of two glibc's _mid_memalign uses for align (which is above 16 and at most
// 2^63): align itself or the next power of two.
inline std::size_t roundedAlign(std::size_t align) {
  std::size_t a = 32;
  while (a < align) a <<= 1;
  return a;
}

// _mid_memalign: up to 16 is malloc; above SIZE_MAX / 2 + 1 EINVAL; else rounded up to a
// power of two.
inline Outcome memalignOutcome(std::size_t align, std::size_t n) {
  if (align <= 16) return mallocOutcome(n);
  if (align > SIZE_MAX / 2 + 1) return Outcome::kInval;
  return sized(n, roundedAlign(align));
}

// glibc 2.36's aligned_alloc is memalign; the shim documents glibc 2.38's (and C17's)
// contract instead: an alignment that is not a power of two (0 included) is EINVAL.
inline Outcome alignedAllocOutcome(std::size_t align, std::size_t n) {
  if (align == 0 || (align & (align - 1)) != 0) return Outcome::kInval;
  return memalignOutcome(align, n);
}

// __posix_memalign: EINVAL unless a power-of-two multiple of sizeof(void*); then memalign.
inline Outcome posixMemalignOutcome(std::size_t align, std::size_t n) {
  if (align == 0 || align % sizeof(void*) != 0 || (align & (align - 1)) != 0)
    return Outcome::kInval;
  return memalignOutcome(align, n);
}

// __libc_pvalloc: ENOMEM when rounding up to the page overflows; then memalign(page, ...).
inline Outcome pvallocOutcome(std::size_t n, std::size_t page) {
  std::size_t rounded;
  if (__builtin_add_overflow(n, page - 1, &rounded)) return Outcome::kNoMem;
  return memalignOutcome(page, rounded & ~(page - 1));
}

}  // namespace strata::fuzz
