// A test layer that counts what reaches the heap below it: objects made and freed, the last
// request, and frees of pointers it never made (strays).
#pragma once
#include <cstddef>
#include <set>

#include "strata/concepts.hpp"

namespace strata::test {

template <Heap Super>
class CountingHeap : public Super {
 public:
  static constexpr std::size_t Alignment = Super::Alignment;
  // Not noexcept: Super may be a throwing heap.
  void* malloc(std::size_t n) {
    void* p = Super::malloc(n);
    if (p != nullptr) {
      ++mallocs;
      lastRequest = n;
      outstanding.insert(p);
    }
    return p;
  }
  void free(void* p) noexcept {
    if (p == nullptr) return;
    ++frees;
    if (outstanding.erase(p) == 0) ++strays;
    Super::free(p);
  }
  std::size_t live() const { return mallocs - frees; }
  std::size_t mallocs = 0, frees = 0, lastRequest = 0;
  std::size_t strays = 0;  // frees of pointers this heap never handed out
  std::set<void*> outstanding;
};

}  // namespace strata::test
