// The page logic of the recorder's Touch events (see touch.hpp).
#include "record/recorder/touch.hpp"

#include <errno.h>

#include "strata/platform/memory.hpp"

namespace strata::record {

bool interiorPages(std::uintptr_t begin, std::uintptr_t end, std::size_t page,
                   std::uintptr_t* first, std::uintptr_t* last) noexcept {
  const std::uintptr_t mask = page - 1;
  if (end <= begin || begin > UINTPTR_MAX - mask) return false;
  const std::uintptr_t f = (begin + mask) & ~mask;
  const std::uintptr_t l = end & ~mask;
  if (f >= l) return false;
  *first = f;
  *last = l;
  return true;
}

bool releasePages(const void* object, std::uint64_t from, std::uint64_t to,
                  std::size_t page) noexcept {
  const auto base = reinterpret_cast<std::uintptr_t>(object);
  std::uintptr_t first, last;
  if (!interiorPages(base + from, base + to, page, &first, &last)) return true;
  const int savedErrno = errno;  // the program must not see madvise's errno
  const bool ok =
      platform::decommit(reinterpret_cast<void*>(first), last - first, platform::Decommit::Now);
  errno = savedErrno;
  return ok;
}

std::uint64_t touchedBytes(const void* object, std::uint64_t size, std::size_t page) noexcept {
  const auto base = reinterpret_cast<std::uintptr_t>(object);
  std::uintptr_t first, last;
  if (!interiorPages(base, base + size, page, &first, &last)) return size;
  // 1 KiB of result vector: small enough for any thread's stack inside free().
  constexpr std::size_t kPagesPerCall = 1024;
  unsigned char vec[kPagesPerCall];
  std::uint64_t absent = 0;
  bool lastResident = true;
  const int savedErrno = errno;
  for (std::uintptr_t p = first; p < last;) {
    const std::size_t pages = (last - p) / page < kPagesPerCall ? (last - p) / page : kPagesPerCall;
    if (::mincore(reinterpret_cast<void*>(p), pages * page, vec) != 0) {
      errno = savedErrno;
      return kTouchUnknown;
    }
    for (std::size_t i = 0; i < pages; ++i) absent += (vec[i] & 1) == 0;
    lastResident = (vec[pages - 1] & 1) != 0;
    p += pages * page;
  }
  errno = savedErrno;
  // The partial last page is shared with whatever follows the object, so it is resident
  // whether or not the program wrote there: it counts as touched when the last whole page
  // was (a program that writes through to the end), not otherwise. The partial first page
  // holds the object's first bytes, which programs write, and always counts.
  const std::uint64_t tail = lastResident ? 0 : base + size - last;
  return size - absent * page - tail;
}

}  // namespace strata::record
