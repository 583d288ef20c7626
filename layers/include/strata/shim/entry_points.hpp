// The allocation entry points of a malloc replacement, as one list: the C functions, glibc's
// __libc_* aliases and every replaceable operator new and delete. STRATA_DEFINE_MALLOC
// (malloc_shim.hpp) and the recorder (toolkit/record/entry_points.cpp) both generate their
// definitions from it, and the recorder's test program calls every entry of it
// (tests/toolkit/record/entry_points_program.cpp), so the three cannot drift apart: an entry added
// here is exported by every drop-in malloc, and recorded (or deliberately left to the C
// library) by the recorder.
//
// The lists are macros taking a per-entry macro X and a context ctx passed through to it:
//
//   X(ctx, kind, ret, name, params, spec, role, args)
//
//   kind   what the call does, for a consumer that treats entries differently:
//            Create     returns a new object (or nullptr)
//            Release    ends the object it is given
//            Resize     realloc's kind: ends one object and makes another
//            Query      allocates and frees nothing (the recorder leaves these to the C
//                       library: it does not define them)
//            LibcAlias  glibc's internal name of another entry (the recorder reaches the C
//                       library through these, so it cannot define them)
//   ret name params spec   the signature: `ret name params spec { ... }`
//   role args   what the entry means, as a call of a static member function `role` of the
//          implementing type (MallocShim's names), passing `args`: free_sized(p, size)
//          means free(p), every operator delete means operatorDelete(p).
//
// Why macros and not a constexpr table: what is generated is function definitions with C
// linkage names and operator functions, which only the preprocessor can produce; and not an
// X-macro file to #include, because STRATA_DEFINE_MALLOC is itself a macro, which cannot
// #include. The C entries go inside `extern "C" { ... }`; the C++ ones outside it.
#pragma once
#include <malloc.h>

#include <cstddef>
#include <new>

// clang-format off
#define STRATA_C_ENTRY_POINTS(X, ctx)                                                              \
  X(ctx, Create, void*, malloc, (std::size_t n), noexcept, malloc, (n))                           \
  X(ctx, Release, void, free, (void* p), noexcept, free, (p))                                      \
  X(ctx, Create, void*, calloc, (std::size_t n, std::size_t m), noexcept, calloc, (n, m))         \
  X(ctx, Resize, void*, realloc, (void* p, std::size_t n), noexcept, realloc, (p, n))              \
  X(ctx, Resize, void*, reallocarray, (void* p, std::size_t n, std::size_t m), noexcept,           \
    reallocarray, (p, n, m))                                                                       \
  X(ctx, Create, void*, memalign, (std::size_t a, std::size_t n), noexcept, memalign, (a, n))      \
  X(ctx, Create, int, posix_memalign, (void** out, std::size_t a, std::size_t n), noexcept,        \
    posix_memalign, (out, a, n))                                                                   \
  X(ctx, Create, void*, aligned_alloc, (std::size_t a, std::size_t n), noexcept, aligned_alloc,    \
    (a, n))                                                                                        \
  X(ctx, Create, void*, valloc, (std::size_t n), noexcept, valloc, (n))                           \
  X(ctx, Create, void*, pvalloc, (std::size_t n), noexcept, pvalloc, (n))                         \
  X(ctx, Query, std::size_t, malloc_usable_size, (void* p), noexcept, malloc_usable_size, (p))     \
  X(ctx, Release, void, free_sized, (void* p, std::size_t), noexcept, free, (p))                  \
  X(ctx, Release, void, free_aligned_sized, (void* p, std::size_t, std::size_t), noexcept, free,   \
    (p))                                                                                           \
  X(ctx, Query, struct mallinfo2, mallinfo2, (), noexcept, mallinfo2, ())                          \
  X(ctx, Query, void, malloc_stats, (), noexcept, malloc_stats, ())                                \
  X(ctx, Query, int, malloc_trim, (std::size_t pad), noexcept, malloc_trim, (pad))                 \
  X(ctx, LibcAlias, void*, __libc_malloc, (std::size_t n), noexcept, malloc, (n))                 \
  X(ctx, LibcAlias, void, __libc_free, (void* p), noexcept, free, (p))                             \
  X(ctx, LibcAlias, void*, __libc_calloc, (std::size_t n, std::size_t m), noexcept, calloc,       \
    (n, m))                                                                                        \
  X(ctx, LibcAlias, void*, __libc_realloc, (void* p, std::size_t n), noexcept, realloc, (p, n))    \
  X(ctx, LibcAlias, void*, __libc_memalign, (std::size_t a, std::size_t n), noexcept, memalign,    \
    (a, n))                                                                                        \
  X(ctx, LibcAlias, void*, __libc_valloc, (std::size_t n), noexcept, valloc, (n))                 \
  X(ctx, LibcAlias, void*, __libc_pvalloc, (std::size_t n), noexcept, pvalloc, (n))

#define STRATA_CXX_ENTRY_POINTS(X, ctx)                                                            \
  X(ctx, Create, void*, operator new, (std::size_t n), , operatorNew, (n))                        \
  X(ctx, Create, void*, operator new[], (std::size_t n), , operatorNew, (n))                      \
  X(ctx, Create, void*, operator new, (std::size_t n, const std::nothrow_t&), noexcept,            \
    operatorNewNothrow, (n))                                                                       \
  X(ctx, Create, void*, operator new[], (std::size_t n, const std::nothrow_t&), noexcept,          \
    operatorNewNothrow, (n))                                                                       \
  X(ctx, Create, void*, operator new, (std::size_t n, std::align_val_t a), , operatorNew, (n, a)) \
  X(ctx, Create, void*, operator new[], (std::size_t n, std::align_val_t a), , operatorNew,        \
    (n, a))                                                                                        \
  X(ctx, Create, void*, operator new, (std::size_t n, std::align_val_t a, const std::nothrow_t&),  \
    noexcept, operatorNewNothrow, (n, a))                                                          \
  X(ctx, Create, void*, operator new[],                                                            \
    (std::size_t n, std::align_val_t a, const std::nothrow_t&), noexcept, operatorNewNothrow,      \
    (n, a))                                                                                        \
  X(ctx, Release, void, operator delete, (void* p), noexcept, operatorDelete, (p))                 \
  X(ctx, Release, void, operator delete[], (void* p), noexcept, operatorDelete, (p))               \
  X(ctx, Release, void, operator delete, (void* p, std::size_t), noexcept, operatorDelete, (p))    \
  X(ctx, Release, void, operator delete[], (void* p, std::size_t), noexcept, operatorDelete, (p))  \
  X(ctx, Release, void, operator delete, (void* p, std::align_val_t), noexcept, operatorDelete,    \
    (p))                                                                                           \
  X(ctx, Release, void, operator delete[], (void* p, std::align_val_t), noexcept, operatorDelete,  \
    (p))                                                                                           \
  X(ctx, Release, void, operator delete, (void* p, std::size_t, std::align_val_t), noexcept,       \
    operatorDelete, (p))                                                                           \
  X(ctx, Release, void, operator delete[], (void* p, std::size_t, std::align_val_t), noexcept,     \
    operatorDelete, (p))                                                                           \
  X(ctx, Release, void, operator delete, (void* p, const std::nothrow_t&), noexcept,               \
    operatorDelete, (p))                                                                           \
  X(ctx, Release, void, operator delete[], (void* p, const std::nothrow_t&), noexcept,             \
    operatorDelete, (p))                                                                           \
  X(ctx, Release, void, operator delete, (void* p, std::align_val_t, const std::nothrow_t&),       \
    noexcept, operatorDelete, (p))                                                                 \
  X(ctx, Release, void, operator delete[], (void* p, std::align_val_t, const std::nothrow_t&),     \
    noexcept, operatorDelete, (p))
// clang-format on
