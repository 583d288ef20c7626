// OperatorNew<Shim>: the replaceable operator new and delete over a malloc shim's C entry
// points (Shim::malloc, Shim::memalign, Shim::free, Shim::kMinAlign): the standard's loop on
// the new_handler, std::bad_alloc when there is none, the nothrow forms. MallocShim derives
// from it, so STRATA_DEFINE_MALLOC finds every role of entry_points.hpp on the shim. It
// throws through cxx_runtime.hpp, so a malloc library built without libstdc++ throws the
// program's own bad_alloc. Cost: the C entry point's, plus a branch when it returns nullptr.
#pragma once
#include <cstddef>
#include <new>

#include "strata/shim/cxx_runtime.hpp"

namespace strata {

// Shim is the deriving MallocShim (incomplete here, so no concept can name it; its members
// are looked up when an operator is first called).
template <class Shim>
class OperatorNew {
 public:
  // The standard's loop: retry while a new_handler exists, else throw std::bad_alloc.
  static void* operatorNew(std::size_t n) {
    for (;;) {
      if (void* p = Shim::malloc(n)) [[likely]] return p;
      std::new_handler handler = detail::currentNewHandler();
      if (handler == nullptr) detail::throwBadAlloc();
      handler();
    }
  }

  // The aligned form: the same loop over memalign.
  static void* operatorNew(std::size_t n, std::align_val_t align) {
    const auto a = static_cast<std::size_t>(align);
    for (;;) {
      if (void* p = a <= Shim::kMinAlign ? Shim::malloc(n) : Shim::memalign(a, n)) [[likely]]
        return p;
      std::new_handler handler = detail::currentNewHandler();
      if (handler == nullptr) detail::throwBadAlloc();
      handler();
    }
  }

  // The nothrow forms call the throwing ones, as the standard specifies (so a new_handler
  // still runs), and turn the exception into nullptr. Built without exceptions (the malloc
  // libraries), they run the same loop and return nullptr where it would throw; a
  // new_handler that throws then throws through them.
  static void* operatorNewNothrow(std::size_t n) noexcept {
#if __cpp_exceptions
    try {
      return operatorNew(n);
    } catch (...) {
      return nullptr;
    }
#else
    for (;;) {
      if (void* p = Shim::malloc(n)) [[likely]] return p;
      std::new_handler handler = detail::currentNewHandler();
      if (handler == nullptr) return nullptr;
      handler();
    }
#endif
  }

  static void* operatorNewNothrow(std::size_t n, std::align_val_t align) noexcept {
#if __cpp_exceptions
    try {
      return operatorNew(n, align);
    } catch (...) {
      return nullptr;
    }
#else
    const auto a = static_cast<std::size_t>(align);
    for (;;) {
      if (void* p = a <= Shim::kMinAlign ? Shim::malloc(n) : Shim::memalign(a, n)) [[likely]]
        return p;
      std::new_handler handler = detail::currentNewHandler();
      if (handler == nullptr) return nullptr;
      handler();
    }
#endif
  }

  // Every operator delete form: free.
  static void operatorDelete(void* p) noexcept { Shim::free(p); }
};

}  // namespace strata
