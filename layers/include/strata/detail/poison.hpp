// Telling AddressSanitizer which bytes are off limits. Zones, obstacks and reaps poison memory
// that is freed or cleared, so a use after clear is reported; in a build without ASan these
// compile to nothing.
#pragma once
#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define STRATA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STRATA_ASAN 1
#endif
#endif

#ifdef STRATA_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace strata::detail {

inline constexpr bool kAsan =
#ifdef STRATA_ASAN
    true;
#else
    false;
#endif

// Marks n bytes at p as not to be touched (until unpoisoned).
inline void poison(const void* p, std::size_t n) noexcept {
#ifdef STRATA_ASAN
  ASAN_POISON_MEMORY_REGION(p, n);
#else
  (void)p;
  (void)n;
#endif
}

// Marks n bytes at p as usable again.
inline void unpoison(const void* p, std::size_t n) noexcept {
#ifdef STRATA_ASAN
  ASAN_UNPOISON_MEMORY_REGION(p, n);
#else
  (void)p;
  (void)n;
#endif
}

}  // namespace strata::detail
