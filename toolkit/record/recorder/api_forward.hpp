// What the recorder's interposed Strata C API functions share (reap_entry_points.cpp,
// obstack_entry_points.cpp): forwarding a call to the library with the recursion guard raised
// (what the library allocates inside it is its own business, not the program's), and
// recording a reap's creation or an allocation from it after the real call.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "record/recorder/core.hpp"
#include "record/recorder/reaps.hpp"

namespace strata::record {

// count * size, saturated (an overflowing request is recorded as SIZE_MAX).
inline uint64_t product(size_t count, size_t size) {
  size_t total;
  return __builtin_mul_overflow(count, size, &total) ? SIZE_MAX : total;
}

// Calls a forwarded Strata API function with the recursion guard raised: what the library
// allocates inside it is its own business, not the program's.
template <class Real, class... Args>
auto guarded(Real real, Args... args) {
  Guard g;
  return real(args...);
}

// reap_create / region_create: the real call, then (when this call is recorded) a
// reap_create event naming the parent.
template <class Handle, class Real>
Handle* forwardCreate(Real real, Handle* parent) {
  const bool rec = recording();
  Handle* r = guarded(real, parent);
  if (rec) recordReapCreate(parent, r);
  return r;
}

// An allocation from reap or region `reap` (reap_malloc, region_alloc, ...): the real call,
// then (when this call is recorded) a reap_malloc event of `size` bytes.
template <class Result, class Real, class... Args>
Result forwardAlloc(const void* reap, uint64_t size, Real real, Args... args) {
  const bool rec = recording();
  Result p = guarded(real, args...);
  if (rec) recordReapMalloc(reap, size, p);
  return p;
}

}  // namespace strata::record
