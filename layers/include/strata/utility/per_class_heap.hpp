// PerClassHeap: a base class that gives a C++ class its own operator new and delete, served
// by one shared instance of a heap (UniqueHeap<H, Tag>):
//
//   class Node : public strata::PerClassHeap<strata::KingsleyHeap<strata::SbrkHeap<>>> {...};
//
// Every form is covered, so no expression silently falls back to the global heap: single and
// array, throwing (std::bad_alloc when the heap gives nullptr) and nothrow (nullptr), sized
// and unsized delete, aligned forms (an alignment above H::Alignment over-allocates, as
// PmrResource does), and placement new, which a class-scope operator new would otherwise
// hide. Classes deriving from PerClassHeap<H> share one instance; give a class its own with
// a Tag (PerClassHeap<H, Node>). The heap is not locked: use a LockedHeap for classes
// allocated by several threads. The base is empty, so it adds nothing to the object.
#pragma once
#include <cstddef>
#include <new>

#include "strata/concepts.hpp"
#include "strata/detail/over_aligned.hpp"
#include "strata/detail/raise.hpp"
#include "strata/utility/unique_heap.hpp"

namespace strata {

template <Heap H, class Tag = void>
class PerClassHeap {
 public:
  // The instance every new and delete of the deriving classes uses.
  static H& classHeap() noexcept { return UniqueHeap<H, Tag>::instance(); }

  // Plain forms: the heap's malloc and a null check.
  static void* operator new(std::size_t n) { return orThrow(tryMalloc(n)); }
  static void* operator new[](std::size_t n) { return orThrow(tryMalloc(n)); }
  static void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return tryMalloc(n); }
  static void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
    return tryMalloc(n);
  }

  // Aligned forms, chosen by the compiler for classes aligned beyond 16 bytes.
  static void* operator new(std::size_t n, std::align_val_t a) {
    return orThrow(tryMalloc(n, a));
  }
  static void* operator new[](std::size_t n, std::align_val_t a) {
    return orThrow(tryMalloc(n, a));
  }
  static void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return tryMalloc(n, a);
  }
  static void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return tryMalloc(n, a);
  }

  // Placement forms: construct in memory the caller already has.
  static void* operator new(std::size_t, void* where) noexcept { return where; }
  static void* operator new[](std::size_t, void* where) noexcept { return where; }

  // Every delete form frees to the same heap; sizes are not needed.
  static void operator delete(void* p) noexcept { classHeap().free(p); }
  static void operator delete[](void* p) noexcept { classHeap().free(p); }
  static void operator delete(void* p, std::size_t) noexcept { classHeap().free(p); }
  static void operator delete[](void* p, std::size_t) noexcept { classHeap().free(p); }
  static void operator delete(void* p, const std::nothrow_t&) noexcept { classHeap().free(p); }
  static void operator delete[](void* p, const std::nothrow_t&) noexcept { classHeap().free(p); }

  // Aligned deletes undo exactly what the aligned news did, decided by the same compare.
  static void operator delete(void* p, std::align_val_t a) noexcept { freeAligned(p, a); }
  static void operator delete[](void* p, std::align_val_t a) noexcept { freeAligned(p, a); }
  static void operator delete(void* p, std::size_t, std::align_val_t a) noexcept {
    freeAligned(p, a);
  }
  static void operator delete[](void* p, std::size_t, std::align_val_t a) noexcept {
    freeAligned(p, a);
  }
  static void operator delete(void* p, std::align_val_t a, const std::nothrow_t&) noexcept {
    freeAligned(p, a);
  }
  static void operator delete[](void* p, std::align_val_t a, const std::nothrow_t&) noexcept {
    freeAligned(p, a);
  }

  static void operator delete(void*, void*) noexcept {}
  static void operator delete[](void*, void*) noexcept {}

 private:
  // A zero-byte array (new T[0]) still needs a unique pointer, so 0 becomes 1. A heap that
  // throws (ThrowExceptionHeap) is caught here so the nothrow forms keep their promise
  // (built without exceptions, no heap can throw).
  static void* tryMalloc(std::size_t n) noexcept {
#if __cpp_exceptions
    try {
      return classHeap().malloc(n == 0 ? 1 : n);
    } catch (const std::bad_alloc&) {
      return nullptr;
    }
#else
    return classHeap().malloc(n == 0 ? 1 : n);
#endif
  }

  // Alignment within the heap's costs one compare more than tryMalloc(n).
  static void* tryMalloc(std::size_t n, std::align_val_t a) noexcept {
    const auto align = static_cast<std::size_t>(a);
    if (align <= H::Alignment) return tryMalloc(n);
#if __cpp_exceptions
    try {
      return detail::malloc_over_aligned(classHeap(), n == 0 ? 1 : n, align);
    } catch (const std::bad_alloc&) {
      return nullptr;
    }
#else
    return detail::malloc_over_aligned(classHeap(), n == 0 ? 1 : n, align);
#endif
  }

  static void freeAligned(void* p, std::align_val_t a) noexcept {
    if (static_cast<std::size_t>(a) <= H::Alignment)
      classHeap().free(p);
    else
      detail::free_over_aligned(classHeap(), p);
  }

  // The throwing forms' contract: no memory, std::bad_alloc. Built without exceptions there
  // is nothing to throw, and a new-expression may not yield nullptr, so the program stops as
  // libstdc++'s own no-exceptions build does (the nothrow forms return nullptr instead).
  static void* orThrow(void* p) {
    if (p == nullptr) detail::raise<std::bad_alloc>();
    return p;
  }
};

}  // namespace strata
