// Telling Strata's drag tool about objects (toolkit/protocol/include/strata/protocol/drag.h): with
// STRATA_TRACE_DRAG=1, in a program running under Valgrind with the drag tool (`strata
// drag`), each event that creates an object or ends one also tells the tool where the object
// lives, so that the tool can find each object's last use among the program's loads and
// stores. The requests are made under the recorder's lock right after the event is appended,
// so they reach the tool in trace order; the rings are off (every call takes the lock path,
// so a create's request comes before the program can use the object). Off otherwise: one
// test of a flag on the lock path.
#pragma once
#include <stdint.h>

#include "record/recorder/core.hpp"

namespace strata::record {

[[gnu::visibility("hidden")]] extern bool gDrag;

// At start, with STRATA_TRACE_DRAG set: turns the requests on when the drag tool answers;
// under another Valgrind tool says so on stderr, and records without them either way.
void initDrag() noexcept;

// The index in the trace of the event appended last (under the lock).
inline uint64_t lastEventSeq() { return gCore.writer->events() - 1; }

// Under the lock, right after the creating event of object `id` at addr (size bytes) was
// appended; objects of no bytes are not watched.
[[gnu::noinline]] void dragCreateSlow(uint64_t id, uintptr_t addr, uint64_t size) noexcept;
inline void dragCreate(uint64_t id, uintptr_t addr, uint64_t size) {
  if (gDrag) [[unlikely]]
    dragCreateSlow(id, addr, size);
}

// Under the lock, right after the event that ends the object at addr was appended (free,
// delete, reap_free, the realloc of it, or the reap_clear / reap_destroy that frees it).
[[gnu::noinline]] void dragReleaseSlow(uintptr_t addr) noexcept;
inline void dragRelease(uintptr_t addr) {
  if (gDrag) [[unlikely]]
    dragReleaseSlow(addr);
}

}  // namespace strata::record
