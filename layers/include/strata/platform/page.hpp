// The page: the size the layers' constants assume, the size the running system reports,
// and rounding to whole pages. One place for both, so that no layer writes 4096 itself.
//
// Why two sizes: layout constants (a segment's header, the first page a cached segment
// keeps, how much of a size-class page is carved at a time) must be known at compile time,
// and they assume kPageSize. What must match the running system exactly (the length of a
// mapping handed to MmapHeap, valloc's alignment) asks pageSize(). On every system Strata
// builds for (x86-64 and the common arm64 configurations) the two agree; a system whose
// pages are larger than kPageSize would see madvise and mremap of partial pages refused,
// so the tests check pageSizeIsAssumed().
#pragma once
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdint>

#include "strata/detail/align.hpp"

namespace strata::platform {

inline constexpr std::size_t kPageSize = 4096;
static_assert(detail::is_pow2(kPageSize), "page rounding masks need a power of two");
#ifdef PAGE_SIZE
static_assert(PAGE_SIZE == kPageSize, "this system's fixed page size differs from kPageSize");
#endif

// The running system's page size, asked once (a plain atomic rather than a guarded static,
// so the malloc libraries need no C++ runtime). Cost after the first call: one load.
inline std::size_t pageSize() noexcept {
  static constinit std::atomic<std::size_t> cached{0};
  std::size_t size = cached.load(std::memory_order_relaxed);
  if (size == 0) {
    size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    cached.store(size, std::memory_order_relaxed);
  }
  return size;
}

// True when the running system's pages are the kPageSize the layout constants assume.
inline bool pageSizeIsAssumed() noexcept { return pageSize() == kPageSize; }

// n rounded up to whole pages of kPageSize; n is trusted not to overflow.
constexpr std::size_t pageAlignUp(std::size_t n) noexcept {
  return detail::align_up(n, kPageSize);
}

// The address a rounded down to the start of its page.
constexpr std::uintptr_t pageAlignDown(std::uintptr_t a) noexcept {
  return a & ~std::uintptr_t{kPageSize - 1};
}

// n rounded up to whole pages of kPageSize into out; false (out untouched) on overflow.
constexpr bool checkedPageAlignUp(std::size_t n, std::size_t& out) noexcept {
  return detail::checked_align_up(n, kPageSize, out);
}

}  // namespace strata::platform
