// The recorder's own memory (mapped_memory.hpp): anonymous mappings, the layers' platform calls
// (inline, plain system calls) but for MADV_HUGEPAGE.
#include "record/recorder/mapped_memory.hpp"

#include <sys/mman.h>

#include <cstdint>

#include "strata/platform/memory.hpp"

namespace strata::record {

void* mapPages(std::size_t bytes) noexcept {
  return platform::map(bytes);
}

void* mapTable(std::size_t bytes) noexcept {
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  if (bytes < kHuge) return mapPages(bytes);
  auto* raw = static_cast<unsigned char*>(mapPages(bytes + kHuge));
  if (raw == nullptr) return nullptr;
  const std::uintptr_t start = (reinterpret_cast<std::uintptr_t>(raw) + kHuge - 1) & ~(kHuge - 1);
  unsigned char* p = reinterpret_cast<unsigned char*>(start);
  if (p != raw) platform::unmap(raw, static_cast<std::size_t>(p - raw));
  const auto tail = static_cast<std::size_t>((raw + bytes + kHuge) - (p + bytes));
  if (tail != 0) platform::unmap(p + bytes, tail);
  ::madvise(p, bytes, MADV_HUGEPAGE);
  return p;
}

}  // namespace strata::record
