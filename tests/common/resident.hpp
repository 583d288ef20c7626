// How much of a set of memory ranges is resident, page by page (mincore): what a test of a
// heap's memory going back to the system asks of the heap's own pages, without counting the
// rest of the process (or a sanitizer's shadow memory) as /proc's figures would.
#pragma once
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

namespace strata::test {

// The bytes of the pages the ranges touch that are resident now; an unmapped page is not.
inline std::size_t residentBytes(const std::vector<std::pair<const void*, std::size_t>>& ranges) {
  const std::uintptr_t page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  std::set<std::uintptr_t> pages;
  for (const auto& [at, n] : ranges) {
    const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(at) & ~(page - 1);
    for (std::uintptr_t p = first; p < reinterpret_cast<std::uintptr_t>(at) + n; p += page)
      pages.insert(p);
  }
  std::size_t resident = 0;
  for (const std::uintptr_t p : pages) {
    unsigned char in = 0;
    if (::mincore(reinterpret_cast<void*>(p), page, &in) == 0 && (in & 1) != 0) resident += page;
  }
  return resident;
}

}  // namespace strata::test
