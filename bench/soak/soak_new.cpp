// The soak program's C++ entry points (bench/soak/): each form of operator new and its
// matching operator delete, called from C. A std::bad_alloc becomes a NULL result, which the
// caller counts as a refusal; any other exception ends the program (noexcept).
#include <cstddef>
#include <new>

#include "soak.h"

void* soak_new(std::size_t n, std::size_t align, int kind) noexcept {
  const std::align_val_t a{align};
  try {
    switch (kind) {
      case SOAK_NEW: return ::operator new(n);
      case SOAK_NEW_ARRAY: return ::operator new[](n);
      case SOAK_NEW_ALIGNED: return ::operator new(n, a);
      case SOAK_NEW_ARRAY_ALIGNED: return ::operator new[](n, a);
      case SOAK_NEW_NOTHROW: return ::operator new(n, std::nothrow);
      case SOAK_NEW_ALIGNED_NOTHROW: return ::operator new(n, a, std::nothrow);
      default: return nullptr;
    }
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

void soak_delete(void* p, std::size_t n, std::size_t align, int kind, int sized) noexcept {
  const std::align_val_t a{align};
  switch (kind) {
    case SOAK_NEW:
    case SOAK_NEW_NOTHROW:
      sized ? ::operator delete(p, n) : ::operator delete(p);
      break;
    case SOAK_NEW_ARRAY:
      sized ? ::operator delete[](p, n) : ::operator delete[](p);
      break;
    case SOAK_NEW_ALIGNED:
    case SOAK_NEW_ALIGNED_NOTHROW:
      sized ? ::operator delete(p, n, a) : ::operator delete(p, a);
      break;
    case SOAK_NEW_ARRAY_ALIGNED:
      sized ? ::operator delete[](p, n, a) : ::operator delete[](p, a);
      break;
    default: break;
  }
}
