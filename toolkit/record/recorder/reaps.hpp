// Recording the Strata reap, region and obstack C APIs (<strata/reap.h>, <strata/region.h>,
// <strata/obstack.h>; an obstack is recorded as a reap): reaps are
// entries of the address map (their handles, with the parent's id), and so are the objects
// in them (with their reap's id); clearing or destroying a reap forgets its objects and its
// descendant reaps. Each function takes the lock itself and merges the rings first; the
// entry points that call them are in reap_entry_points.cpp.
#pragma once
#include <stddef.h>
#include <stdint.h>

extern "C" {
struct strata_reap;
}

namespace strata::record {

// Logs reap_create/region_create: handle r (nullptr: failed), child of parent (may be null).
void recordReapCreate(const void* parent, void* r) noexcept;

// Logs an allocation p of size bytes from reap r (an unknown reap: a plain malloc, so that
// the object's later release still matches).
void recordReapMalloc(const void* r, uint64_t size, void* p) noexcept;

// Logs reap_free(r, p): only when p is a live object of r, as the library itself ignores
// anything else. Before the real call, for the reason recordRelease (calls.hpp) gives.
void recordReapFree(const void* r, void* p) noexcept;

// Logs reap_clear (destroy = false) or reap_destroy of r and forgets every address they
// release: r's objects, its descendant reaps and their objects, and r itself on destroy.
// Called before the real call. Cost: O(map capacity x tree depth).
void recordReapClear(const void* r, bool destroy) noexcept;

// Logs obstack_free(h, obj) (obstack_entry_points.cpp), before the real call: with obj null,
// the destruction of the reap h stands for (recordReapClear); else reap_free of obj and of
// every object made after it from h, newest first, when obj is a live object of h (the
// library aborts on anything else). Cost: O(map capacity).
void recordObstackFree(const void* h, const void* obj) noexcept;

// reap_realloc(r, p, size) through `real`, recorded as reap_malloc of the new object then
// reap_free of the old (the format has no reap_realloc), under the lock across the real call
// like realloc; the real call runs with the recursion guard raised. Returns its result.
void* recordReapRealloc(strata_reap* r, void* p, size_t size,
                        void* (*real)(strata_reap*, void*, size_t)) noexcept;

}  // namespace strata::record
