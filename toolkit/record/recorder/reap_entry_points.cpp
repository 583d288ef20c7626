// The recorder's interposed Strata C APIs, <strata/reap.h> and <strata/region.h> (the obstack
// API's are in obstack_entry_points.cpp): declared here
// rather than included, because the recorder must not depend on those libraries, only
// forward to them when the program has them (dlsym(RTLD_NEXT), real.hpp). Each call runs the
// real function under the recursion guard (the library's own mallocs are not the program's)
// and logs one reap event (reaps.hpp).
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "record/recorder/api_forward.hpp"
#include "record/recorder/real.hpp"
#include "record/recorder/reaps.hpp"

using strata::record::forwardAlloc;
using strata::record::forwardCreate;
using strata::record::Guard;
using strata::record::guarded;
using strata::record::product;
using strata::record::recordReapClear;
using strata::record::recordReapCreate;
using strata::record::recordReapFree;
using strata::record::recordReapMalloc;
using strata::record::recordReapRealloc;
using strata::record::recording;

extern "C" {
struct strata_reap;
struct strata_region;
strata_reap* reap_create(strata_reap* parent);
void* reap_malloc(strata_reap* r, size_t size);
void* reap_calloc(strata_reap* r, size_t count, size_t size);
void* reap_realloc(strata_reap* r, void* p, size_t size);
void reap_free(strata_reap* r, void* p);
void reap_clear(strata_reap* r);
void reap_destroy(strata_reap* r);
void reapCreate(void** reap, void** parent);
void reapDestroy(void** reap);
void reapFreeAll(void** reap);
void* reapMalloc(void** reap, size_t size);
void reapFree(void** reap, void* p);
strata_region* region_create(strata_region* parent);
void* region_alloc(strata_region* r, size_t size);
void* region_calloc(strata_region* r, size_t count, size_t size);
char* region_strdup(strata_region* r, const char* s);
void region_clear(strata_region* r);
void region_destroy(strata_region* r);
}


STRATA_EXPORT strata_reap* reap_create(strata_reap* parent) {
  auto real = STRATA_REAL(reap_create);
  if (real == nullptr) {
    errno = ENOSYS;
    return nullptr;
  }
  return forwardCreate(real, parent);
}

STRATA_EXPORT void* reap_malloc(strata_reap* r, size_t size) {
  auto real = STRATA_REAL(reap_malloc);
  if (real == nullptr) return nullptr;
  return forwardAlloc<void*>(r, size, real, r, size);
}

STRATA_EXPORT void* reap_calloc(strata_reap* r, size_t count, size_t size) {
  auto real = STRATA_REAL(reap_calloc);
  if (real == nullptr) return nullptr;
  return forwardAlloc<void*>(r, product(count, size), real, r, count, size);
}

// reap_realloc: recorded as reap_malloc of the new object then reap_free of the old (the
// format has no reap_realloc), under the lock across the real call like realloc.
STRATA_EXPORT void* reap_realloc(strata_reap* r, void* p, size_t size) {
  auto real = STRATA_REAL(reap_realloc);
  if (real == nullptr) return nullptr;
  if (!recording()) return real(r, p, size);
  return recordReapRealloc(r, p, size, real);
}

STRATA_EXPORT void reap_free(strata_reap* r, void* p) {
  auto real = STRATA_REAL(reap_free);
  if (real == nullptr) return;
  if (recording()) recordReapFree(r, p);
  Guard g;
  real(r, p);
}

STRATA_EXPORT void reap_clear(strata_reap* r) {
  auto real = STRATA_REAL(reap_clear);
  if (real == nullptr) return;
  if (recording()) recordReapClear(r, false);
  Guard g;
  real(r);
}

STRATA_EXPORT void reap_destroy(strata_reap* r) {
  auto real = STRATA_REAL(reap_destroy);
  if (real == nullptr) return;
  if (recording()) recordReapClear(r, true);
  Guard g;
  real(r);
}

STRATA_EXPORT void reapCreate(void** reap, void** parent) {
  auto real = STRATA_REAL(reapCreate);
  if (real == nullptr) {
    if (reap != nullptr) *reap = nullptr;
    return;
  }
  if (!recording()) return real(reap, parent);
  const void* parentHandle = (parent != nullptr) ? *parent : nullptr;
  guarded(real, reap, parent);
  recordReapCreate(parentHandle, reap != nullptr ? *reap : nullptr);
}

STRATA_EXPORT void reapDestroy(void** reap) {
  auto real = STRATA_REAL(reapDestroy);
  if (real == nullptr) return;
  if (recording() && reap != nullptr) recordReapClear(*reap, true);
  Guard g;
  real(reap);
}

STRATA_EXPORT void reapFreeAll(void** reap) {
  auto real = STRATA_REAL(reapFreeAll);
  if (real == nullptr) return;
  if (recording() && reap != nullptr) recordReapClear(*reap, false);
  Guard g;
  real(reap);
}

STRATA_EXPORT void* reapMalloc(void** reap, size_t size) {
  auto real = STRATA_REAL(reapMalloc);
  if (real == nullptr) return nullptr;
  return forwardAlloc<void*>(reap != nullptr ? *reap : nullptr, size, real, reap, size);
}

STRATA_EXPORT void reapFree(void** reap, void* p) {
  auto real = STRATA_REAL(reapFree);
  if (real == nullptr) return;
  if (recording() && reap != nullptr) recordReapFree(*reap, p);
  Guard g;
  real(reap, p);
}

STRATA_EXPORT strata_region* region_create(strata_region* parent) {
  auto real = STRATA_REAL(region_create);
  if (real == nullptr) {
    errno = ENOSYS;
    return nullptr;
  }
  return forwardCreate(real, parent);
}

STRATA_EXPORT void* region_alloc(strata_region* r, size_t size) {
  auto real = STRATA_REAL(region_alloc);
  if (real == nullptr) return nullptr;
  return forwardAlloc<void*>(r, size, real, r, size);
}

STRATA_EXPORT void* region_calloc(strata_region* r, size_t count, size_t size) {
  auto real = STRATA_REAL(region_calloc);
  if (real == nullptr) return nullptr;
  return forwardAlloc<void*>(r, product(count, size), real, r, count, size);
}

STRATA_EXPORT char* region_strdup(strata_region* r, const char* s) {
  auto real = STRATA_REAL(region_strdup);
  if (real == nullptr) return nullptr;
  return forwardAlloc<char*>(r, s != nullptr ? ::strlen(s) + 1 : 0, real, r, s);
}

STRATA_EXPORT void region_clear(strata_region* r) {
  auto real = STRATA_REAL(region_clear);
  if (real == nullptr) return;
  if (recording()) recordReapClear(r, false);
  Guard g;
  real(r);
}

STRATA_EXPORT void region_destroy(strata_region* r) {
  auto real = STRATA_REAL(region_destroy);
  if (real == nullptr) return;
  if (recording()) recordReapClear(r, true);
  Guard g;
  real(r);
}
