// The C API of <strata/reap.h> over strata::Reap<MallocHeap>. A strata_reap is a Reap; a root
// reap is malloc'ed and built in place, a child lives in its parent (NestedHeap). Nothing here
// needs the C++ runtime (no operator new, built without exceptions and RTTI), so a C program
// links the library, shared or static, with the C compiler alone.
#include "strata/reap.h"

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "strata/detail/align.hpp"
#include "strata/detail/poison.hpp"
#include "strata/reap/reap.hpp"

namespace {

using ReapT = strata::Reap<strata::MallocHeap>;

#if !defined(NDEBUG) || defined(STRATA_ASAN)
constexpr bool kDebug = true;
#else
constexpr bool kDebug = false;
#endif

ReapT* as(strata_reap* r) { return reinterpret_cast<ReapT*>(r); }
strata_reap* as(ReapT* r) { return reinterpret_cast<strata_reap*>(r); }

// Whether p is a live object of r: the exact walk in debug builds, the cheap tag check
// otherwise. A debug build reports a bad pointer with its address.
bool live(ReapT* r, const void* p, const char* what) {
  const bool ok = kDebug ? r->isLive(p) : r->looksLive(p);
  if (!ok && kDebug) {
    std::fprintf(stderr,
                 "strata reap: %s of %p, which reap %p did not hand out or already freed "
                 "(ignored)\n",
                 what, p, static_cast<void*>(r));
  }
  return ok;
}

static_assert(alignof(ReapT) <= alignof(std::max_align_t), "malloc must align a root reap");

ReapT* newRoot() {
  void* mem = std::malloc(sizeof(ReapT));
  return mem != nullptr ? ::new (mem) ReapT() : nullptr;
}

void deleteRoot(ReapT* r) {
  r->~ReapT();
  std::free(r);
}

}  // namespace

extern "C" {

strata_reap* reap_create(strata_reap* parent) {
  ReapT* r = parent != nullptr ? as(parent)->createChild() : newRoot();
  if (r == nullptr) errno = ENOMEM;
  return as(r);
}

void* reap_malloc(strata_reap* r, size_t size) {
  if (r == nullptr) {
    errno = EINVAL;
    return nullptr;
  }
  return as(r)->malloc(size);
}

void* reap_calloc(strata_reap* r, size_t count, size_t size) {
  std::size_t n;
  if (!strata::detail::checked_mul(count, size, n)) {
    errno = ENOMEM;
    return nullptr;
  }
  void* p = reap_malloc(r, n);
  if (p != nullptr) std::memset(p, 0, n);
  return p;
}

void* reap_realloc(strata_reap* r, void* p, size_t size) {
  if (r == nullptr) {
    errno = EINVAL;
    return nullptr;
  }
  if (p != nullptr && !live(as(r), p, "reap_realloc")) {
    errno = EINVAL;
    return nullptr;
  }
  return as(r)->realloc(p, size);
}

void reap_free(strata_reap* r, void* p) {
  if (r == nullptr || p == nullptr) return;
  if (live(as(r), p, "reap_free")) as(r)->free(p);
}

size_t reap_size(strata_reap* r, const void* p) {
  if (r == nullptr || p == nullptr) return 0;
  if (!live(as(r), p, "reap_size")) return 0;
  return ReapT::getSize(const_cast<void*>(p));
}

void reap_clear(strata_reap* r) {
  if (r != nullptr) as(r)->clear();
}

void reap_destroy(strata_reap* r) {
  if (r == nullptr) return;
  ReapT* reap = as(r);
  if (ReapT* parent = reap->parent()) {
    parent->destroyChild(reap);
  } else {
    deleteRoot(reap);
  }
}

int reap_cleanup_register(strata_reap* r, void (*fn)(void*), void* arg) {
  if (r == nullptr || fn == nullptr) {
    errno = EINVAL;
    return -1;
  }
  if (!as(r)->addCleanup(fn, arg)) {
    errno = ENOMEM;
    return -1;
  }
  return 0;
}

void reapCreate(void** reap, void** parent) {
  if (reap == nullptr) return;
  strata_reap* p = parent != nullptr ? static_cast<strata_reap*>(*parent) : nullptr;
  *reap = reap_create(p);
}

void reapDestroy(void** reap) {
  if (reap == nullptr) return;
  reap_destroy(static_cast<strata_reap*>(*reap));
  *reap = nullptr;
}

void reapFreeAll(void** reap) {
  if (reap != nullptr) reap_clear(static_cast<strata_reap*>(*reap));
}

void* reapMalloc(void** reap, size_t size) {
  if (reap == nullptr) {
    errno = EINVAL;
    return nullptr;
  }
  return reap_malloc(static_cast<strata_reap*>(*reap), size);
}

void reapFree(void** reap, void* p) {
  if (reap != nullptr) reap_free(static_cast<strata_reap*>(*reap), p);
}

}  // extern "C"
