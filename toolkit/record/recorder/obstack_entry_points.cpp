// The recorder's interposed obstack API (<strata/obstack.h>, whose obstack_* macros call these
// strata_obstack_* functions): an obstack is recorded as a reap (its handle is the struct
// obstack), each object it finishes (obstack_finish, obstack_alloc, obstack_copy,
// obstack_copy0) as an allocation from it of the object's size, obstack_free(h, obj) as the
// free of obj and of every object made after it in h, and obstack_free(h, NULL) as the
// reap's destruction. The growing object is not an object until it is finished. Declared
// here rather than included: the recorder forwards to the library only when the program has
// it (real.hpp).
#include <stddef.h>
#include <stdint.h>

#include "record/recorder/api_forward.hpp"
#include "record/recorder/real.hpp"
#include "record/recorder/reaps.hpp"

using strata::record::forwardAlloc;
using strata::record::Guard;
using strata::record::guarded;
using strata::record::recordObstackFree;
using strata::record::recordReapCreate;
using strata::record::recording;

extern "C" {
struct obstack;
int strata_obstack_begin(obstack* h, size_t size, size_t alignment, void* (*chunkfun)(size_t),
                         void (*freefun)(void*));
int strata_obstack_begin_1(obstack* h, size_t size, size_t alignment,
                           void* (*chunkfun)(void*, size_t), void (*freefun)(void*, void*),
                           void* arg);
void strata_obstack_grow(obstack* h, const void* data, size_t n);
void strata_obstack_grow0(obstack* h, const void* data, size_t n);
void strata_obstack_1grow(obstack* h, int c);
void strata_obstack_ptr_grow(obstack* h, const void* p);
void strata_obstack_int_grow(obstack* h, int v);
void strata_obstack_blank(obstack* h, ptrdiff_t n);
void strata_obstack_make_room(obstack* h, size_t n);
void* strata_obstack_finish(obstack* h);
void* strata_obstack_alloc(obstack* h, size_t n);
void* strata_obstack_copy(obstack* h, const void* data, size_t n);
void* strata_obstack_copy0(obstack* h, const void* data, size_t n);
void strata_obstack_free(obstack* h, void* obj);
size_t strata_obstack_object_size(const obstack* h);
}

namespace {
// The begin functions: the real call, then (recorded, and when it succeeded) a top-level
// reap_create for h.
template <class Real, class... Args>
int forwardBegin(Real real, obstack* h, Args... args) {
  const bool rec = recording();
  const int ok = guarded(real, h, args...);
  if (rec && ok != 0) recordReapCreate(nullptr, h);
  return ok;
}
}  // namespace

STRATA_EXPORT int strata_obstack_begin(obstack* h, size_t size, size_t alignment,
                                       void* (*chunkfun)(size_t), void (*freefun)(void*)) {
  auto real = STRATA_REAL(strata_obstack_begin);
  if (real == nullptr) return 0;
  return forwardBegin(real, h, size, alignment, chunkfun, freefun);
}

STRATA_EXPORT int strata_obstack_begin_1(obstack* h, size_t size, size_t alignment,
                                         void* (*chunkfun)(void*, size_t),
                                         void (*freefun)(void*, void*), void* arg) {
  auto real = STRATA_REAL(strata_obstack_begin_1);
  if (real == nullptr) return 0;
  return forwardBegin(real, h, size, alignment, chunkfun, freefun, arg);
}

// The calls that grow the current object: forwarded under the guard, nothing recorded.
#define STRATA_GROW_FORWARD(name, ...)                      \
  {                                                         \
    auto real = STRATA_REAL(name);                          \
    if (real != nullptr) guarded(real, h, __VA_ARGS__);     \
  }
STRATA_EXPORT void strata_obstack_grow(obstack* h, const void* data, size_t n)
    STRATA_GROW_FORWARD(strata_obstack_grow, data, n)
STRATA_EXPORT void strata_obstack_grow0(obstack* h, const void* data, size_t n)
    STRATA_GROW_FORWARD(strata_obstack_grow0, data, n)
STRATA_EXPORT void strata_obstack_1grow(obstack* h, int c)
    STRATA_GROW_FORWARD(strata_obstack_1grow, c)
STRATA_EXPORT void strata_obstack_ptr_grow(obstack* h, const void* p)
    STRATA_GROW_FORWARD(strata_obstack_ptr_grow, p)
STRATA_EXPORT void strata_obstack_int_grow(obstack* h, int v)
    STRATA_GROW_FORWARD(strata_obstack_int_grow, v)
STRATA_EXPORT void strata_obstack_blank(obstack* h, ptrdiff_t n)
    STRATA_GROW_FORWARD(strata_obstack_blank, n)
STRATA_EXPORT void strata_obstack_make_room(obstack* h, size_t n)
    STRATA_GROW_FORWARD(strata_obstack_make_room, n)
#undef STRATA_GROW_FORWARD

STRATA_EXPORT void* strata_obstack_finish(obstack* h) {
  auto real = STRATA_REAL(strata_obstack_finish);
  auto size = STRATA_REAL(strata_obstack_object_size);
  if (real == nullptr || size == nullptr) return nullptr;
  const uint64_t n = guarded(size, h);  // the object's size, before finishing it
  return forwardAlloc<void*>(h, n, real, h);
}

STRATA_EXPORT void* strata_obstack_alloc(obstack* h, size_t n) {
  auto real = STRATA_REAL(strata_obstack_alloc);
  if (real == nullptr) return nullptr;
  return forwardAlloc<void*>(h, n, real, h, n);
}

STRATA_EXPORT void* strata_obstack_copy(obstack* h, const void* data, size_t n) {
  auto real = STRATA_REAL(strata_obstack_copy);
  if (real == nullptr) return nullptr;
  return forwardAlloc<void*>(h, n, real, h, data, n);
}

STRATA_EXPORT void* strata_obstack_copy0(obstack* h, const void* data, size_t n) {
  auto real = STRATA_REAL(strata_obstack_copy0);
  if (real == nullptr) return nullptr;
  return forwardAlloc<void*>(h, n == SIZE_MAX ? n : n + 1, real, h, data, n);
}

// Recorded before the real call, as every release (calls.hpp says why).
STRATA_EXPORT void strata_obstack_free(obstack* h, void* obj) {
  auto real = STRATA_REAL(strata_obstack_free);
  if (real == nullptr) return;
  if (recording()) recordObstackFree(h, obj);
  Guard g;
  real(h, obj);
}
