// ThrowExceptionHeap: turns "out of memory" into std::bad_alloc. Every other layer reports
// failure with nullptr so that it composes into C-style code; this is the one layer that
// throws, for C++ callers that expect operator new's contract. Put it at the top of a stack:
// the layers below it stay noexcept. Fast path cost: one compare of the parent's result.
#pragma once
#include <cstddef>
#include <new>

#include "strata/concepts.hpp"
#include "strata/detail/raise.hpp"

namespace strata {

template <Heap Super>
class ThrowExceptionHeap : public Super {
 public:
  static constexpr std::size_t Alignment = Super::Alignment;

  using Super::Super;

  // Returns the parent's object, or throws std::bad_alloc where the parent gave nullptr.
  void* malloc(std::size_t n) {
    void* p = Super::malloc(n);
    if (p == nullptr) detail::raise<std::bad_alloc>();
    return p;
  }
};

}  // namespace strata
