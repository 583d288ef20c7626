// The recorder's own memory (mapped_memory.hpp): anonymous mappings, plain system calls.
#include "mapped_memory.hpp"

#include <sys/mman.h>

#include <cstdint>

namespace strata::record {

void* mapPages(std::size_t bytes) noexcept {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

void* mapTable(std::size_t bytes) noexcept {
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  if (bytes < kHuge) return mapPages(bytes);
  auto* raw = static_cast<unsigned char*>(mapPages(bytes + kHuge));
  if (raw == nullptr) return nullptr;
  const std::uintptr_t start = (reinterpret_cast<std::uintptr_t>(raw) + kHuge - 1) & ~(kHuge - 1);
  unsigned char* p = reinterpret_cast<unsigned char*>(start);
  if (p != raw) ::munmap(raw, static_cast<std::size_t>(p - raw));
  const auto tail = static_cast<std::size_t>((raw + bytes + kHuge) - (p + bytes));
  if (tail != 0) ::munmap(p + bytes, tail);
  ::madvise(p, bytes, MADV_HUGEPAGE);
  return p;
}

}  // namespace strata::record
