// ANSIWrapper: gives any sized heap the C library's contract, so it can stand in for malloc.
//
//  - malloc(0) returns a unique, freeable pointer; free(nullptr) does nothing;
//  - every failure returns nullptr with errno = ENOMEM;
//  - calloc checks count * size for overflow and zeroes the object;
//  - realloc keeps the object in place when it still fits (and is not shrinking below half),
//    otherwise copies; on failure the old object is left intact; realloc(p, 0) frees p and
//    returns nullptr, as glibc does; realloc(nullptr, n) is malloc(n).
#pragma once
#include <cerrno>
#include <cstddef>
#include <cstring>

#include "strata/concepts.hpp"
#include "strata/detail/align.hpp"

namespace strata {

template <SizedHeap Super>
class ANSIWrapper : public Super {
  static_assert(Super::Alignment >= alignof(std::max_align_t),
                "ANSIWrapper: malloc must align to max_align_t; use a 16-byte-aligned parent");

 public:
  static constexpr std::size_t Alignment = Super::Alignment;

  using Super::Super;

  void* malloc(std::size_t n) noexcept {
    if (n == 0) n = 1;
    void* p = Super::malloc(n);
    if (p == nullptr) errno = ENOMEM;
    return p;
  }

  void free(void* p) noexcept {
    if (p != nullptr) Super::free(p);
  }

  void* calloc(std::size_t count, std::size_t size) noexcept {
    std::size_t n;
    if (!detail::checked_mul(count, size, n)) {
      errno = ENOMEM;
      return nullptr;
    }
    void* p = malloc(n);
    if (p != nullptr) std::memset(p, 0, n);
    return p;
  }

  void* realloc(void* p, std::size_t n) noexcept {
    if (p == nullptr) return malloc(n);
    if (n == 0) {
      free(p);
      return nullptr;
    }
    const std::size_t old = Super::getSize(p);
    if (n <= old && n >= old / 2) return p;
    void* q = malloc(n);
    if (q == nullptr) return nullptr;
    std::memcpy(q, p, old < n ? old : n);
    Super::free(p);
    return q;
  }

  std::size_t getSize(void* p) noexcept { return p ? Super::getSize(p) : 0; }
};

}  // namespace strata
