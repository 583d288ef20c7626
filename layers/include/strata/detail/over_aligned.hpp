// Over-aligned objects from a heap that promises less alignment: what PmrResource and
// PerClassHeap do when a caller asks for more than H::Alignment.
//
// The object is carved out of a larger one, and the heap's own pointer is kept in the word
// just below the aligned address, where free_over_aligned finds it. Callers choose this path
// only when the alignment exceeds the heap's, so objects within it pay nothing.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "strata/concepts.hpp"
#include "strata/detail/align.hpp"

namespace strata::detail {

// Allocates n bytes aligned to align (a power of two larger than H::Alignment) by asking for
// n + align + a word, and stores the heap's own pointer just below the aligned address.
// Returns nullptr, with nothing allocated, when the sum overflows or the heap fails (a heap
// that throws instead, such as ThrowExceptionHeap, throws through).
template <Heap H>
void* malloc_over_aligned(H& heap, std::size_t n, std::size_t align) {
  std::size_t total;
  if (!checked_add(n, align, total) || !checked_add(total, sizeof(void*), total)) return nullptr;
  void* raw = heap.malloc(total);
  if (raw == nullptr) return nullptr;
  const auto base = reinterpret_cast<std::uintptr_t>(raw);
  void* p = reinterpret_cast<void*>(align_up(base + sizeof(void*), align));
  std::memcpy(bytes(p) - sizeof(void*), &raw, sizeof raw);
  return p;
}

// Frees an object made by malloc_over_aligned: a load of the word below p and the heap's free.
template <Heap H>
void free_over_aligned(H& heap, void* p) noexcept {
  if (p == nullptr) return;
  void* raw;
  std::memcpy(&raw, bytes(p) - sizeof(void*), sizeof raw);
  heap.free(raw);
}

}  // namespace strata::detail
