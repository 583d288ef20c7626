// record_entry_points_program: calls every entry of the shared entry-point list
// (strata/shim/entry_points.hpp) once, the calls generated from the list itself, so an entry
// added to the list does not compile here until it is called. A call that needs an object
// gets a fresh malloc'ed one (an aligned_alloc'ed one for free_aligned_sized), and every
// object made is freed with free(), so record_test knows the events each call must add: it
// reads this program's output, one line per call, "ROLE NAME", in call order. The C entries
// are found with dlsym (free_sized and free_aligned_sized are not in every C library; under
// the recorder they are the recorder's); glibc's __libc_* aliases are not called (the
// recorder forwards to them, so it does not see them). The calls are fenced by
// malloc(5003)/free and malloc(5004)/free (below the large-object size, so
// without Touch events); the lines are written at the end, so that
// stdio's own buffer allocation does not fall inside the fence.
#include <dlfcn.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cstddef>
#include <new>

#include "strata/shim/entry_points.hpp"

namespace {

char gOut[16384];
std::size_t gLen = 0;
int gMissing = 0;

void note(const char* name, const char* role) {
  const int n = ::snprintf(gOut + gLen, sizeof gOut - gLen, "%s %s\n", role, name);
  if (n > 0) gLen += static_cast<std::size_t>(n);
}
void escape(const void* p) { asm volatile("" : : "r"(p) : "memory"); }

// The C entry `name`, as the process resolves it; exits when there is none.
template <class F>
F lookup(const char* name) {
  void* f = ::dlsym(RTLD_DEFAULT, name);
  if (f == nullptr) {
    ::fprintf(stderr, "entry point %s not found\n", name);
    ++gMissing;
  }
  return reinterpret_cast<F>(f);
}

constexpr std::size_t kSize = 40;
constexpr std::size_t kAlign = 64;

// One overload set per role: calls f as the role allows, with the object it needs.
struct Exercise {
  static void malloc(void* (*f)(std::size_t)) { ::free(f(kSize)); }
  static void calloc(void* (*f)(std::size_t, std::size_t)) { ::free(f(4, kSize / 4)); }
  static void realloc(void* (*f)(void*, std::size_t)) { ::free(f(::malloc(kSize), 2 * kSize)); }
  static void reallocarray(void* (*f)(void*, std::size_t, std::size_t)) {
    ::free(f(::malloc(kSize), 2, kSize));
  }
  static void memalign(void* (*f)(std::size_t, std::size_t)) { ::free(f(kAlign, kSize)); }
  static void posix_memalign(int (*f)(void**, std::size_t, std::size_t)) {
    void* p = nullptr;
    if (f(&p, kAlign, kSize) == 0) ::free(p);
  }
  static void aligned_alloc(void* (*f)(std::size_t, std::size_t)) { ::free(f(kAlign, kSize)); }
  static void valloc(void* (*f)(std::size_t)) { ::free(f(kSize)); }
  static void pvalloc(void* (*f)(std::size_t)) { ::free(f(kSize)); }
  static void free(void (*f)(void*)) { f(::malloc(kSize)); }
  static void free(void (*f)(void*, std::size_t)) { f(::malloc(kSize), kSize); }
  static void free(void (*f)(void*, std::size_t, std::size_t)) {
    f(::aligned_alloc(kAlign, 2 * kAlign), kAlign, 2 * kAlign);
  }
  static void malloc_usable_size(std::size_t (*f)(void*)) {
    void* p = ::malloc(kSize);
    if (f(p) < kSize) ++gMissing;
    ::free(p);
  }
  static void mallinfo2(struct mallinfo2 (*f)()) { f(); }
  static void malloc_stats(void (*f)()) { f(); }
  static void malloc_trim(int (*f)(std::size_t)) { f(0); }
  static void operatorNew(void* (*f)(std::size_t)) { ::free(f(kSize)); }
  static void operatorNew(void* (*f)(std::size_t, std::align_val_t)) {
    ::free(f(kSize, std::align_val_t{kAlign}));
  }
  static void operatorNewNothrow(void* (*f)(std::size_t, const std::nothrow_t&)) {
    ::free(f(kSize, std::nothrow));
  }
  static void operatorNewNothrow(void* (*f)(std::size_t, std::align_val_t,
                                            const std::nothrow_t&)) {
    ::free(f(kSize, std::align_val_t{kAlign}, std::nothrow));
  }
  static void operatorDelete(void (*f)(void*)) { f(::malloc(kSize)); }
  static void operatorDelete(void (*f)(void*, std::size_t)) { f(::malloc(kSize), kSize); }
  static void operatorDelete(void (*f)(void*, std::align_val_t)) {
    f(::aligned_alloc(kAlign, kAlign), std::align_val_t{kAlign});
  }
  static void operatorDelete(void (*f)(void*, std::size_t, std::align_val_t)) {
    f(::aligned_alloc(kAlign, kAlign), kAlign, std::align_val_t{kAlign});
  }
  static void operatorDelete(void (*f)(void*, const std::nothrow_t&)) {
    f(::malloc(kSize), std::nothrow);
  }
  static void operatorDelete(void (*f)(void*, std::align_val_t, const std::nothrow_t&)) {
    f(::aligned_alloc(kAlign, kAlign), std::align_val_t{kAlign}, std::nothrow);
  }
};

}  // namespace

// Each entry's function pointer, resolved before the fence (dlsym may allocate).
#define LOOKUP_C(ctx, kind, ret, name, params, spec, role, args) \
  const auto name##_ptr = lookup<ret(*) params>(#name);
#define CALL_C(ctx, kind, ret, name, params, spec, role, args) CALL_##kind(name##_ptr, name, role)
#define CALL_CXX(ctx, kind, ret, name, params, spec, role, args)          \
  {                                                                       \
    ret(*f) params = &name;                                               \
    CALL_##kind(f, name, role)                                            \
  }
#define CALL_ONE(f, name, role) \
  note(#name, #role);           \
  Exercise::role(f);
#define CALL_Create CALL_ONE
#define CALL_Release CALL_ONE
#define CALL_Resize CALL_ONE
#define CALL_Query CALL_ONE
#define CALL_LibcAlias(f, name, role) escape(reinterpret_cast<const void*>(f));

int main() {
  STRATA_C_ENTRY_POINTS(LOOKUP_C, unused)
  if (gMissing != 0) return 4;
  void* mark = ::malloc(5003);
  escape(mark);
  ::free(mark);
  STRATA_C_ENTRY_POINTS(CALL_C, unused)
  STRATA_CXX_ENTRY_POINTS(CALL_CXX, unused)
  void* end = ::malloc(5004);
  escape(end);
  ::free(end);
  if (gMissing != 0) return 5;
  return ::write(1, gOut, gLen) == static_cast<ssize_t>(gLen) ? 0 : 6;
}
