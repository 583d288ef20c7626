// The recording of one allocation call, as the entry points (entry_points.cpp) make it: into
// the calling thread's ring when it has one (thread_ring.hpp), else directly under the lock
// (events.hpp). Inline: these run on every malloc and free of the program. The malloc path
// (recordCreate, logCreate, createLocked) is forced inline, as the release path's lookup
// (ObjectMap::take): split into units, the compiler no longer inlines the whole chain on its
// own, and the calls and register saves between them cost every recorded call a few percent
// (bench/record_overhead; callgrind counts the instructions per call exactly).
#pragma once
#include <stdint.h>

#include "record/recorder/events.hpp"
#include "record/recorder/large.hpp"
#include "record/recorder/site_recording.hpp"
#include "record/recorder/thread_ring.hpp"
#include "record/recorder/touch.hpp"
#include "record/recorder/touch_sampling.hpp"

namespace strata::record {

// The lock paths of recordCreate and recordRelease: stamp now, take the lock, merge the
// rings, then createLocked / releaseLocked for the calling thread. The table slot is loaded
// first (prefetch, and for a release touch), so that its cache miss overlaps the clock read
// and is over before the lock is taken. With allocation sites on, every create comes here
// (there are no rings) and goes to the sites unit instead.
[[gnu::always_inline]] inline void logCreate(Op op, uint8_t flags, uint64_t size, void* p,
                                             unsigned align) {
  if (gSites.on) [[unlikely]] {
    logCreateWithSite(op, flags, size, p, align);
    return;
  }
  gCore.map.prefetch(reinterpret_cast<uintptr_t>(p));
  const uint64_t t = nowNs();
  Locked lock;
  if (!on()) return;
  drainRings();
  createLocked(threadIndex(), op, flags, t, size, reinterpret_cast<uintptr_t>(p), align);
}
inline void logRelease(Op op, void* p, uint64_t touched) {
  gCore.map.prefetch(reinterpret_cast<uintptr_t>(p));
  const uint64_t t = nowNs();
  gCore.map.touch(reinterpret_cast<uintptr_t>(p));
  Locked lock;
  if (!on()) return;
  drainRings();
  releaseLocked(threadIndex(), op, t, reinterpret_cast<uintptr_t>(p), touched);
}

// Logs a creating call (malloc, calloc, memalign, new, realloc(NULL, n)) that returned p.
// A large object's interior pages are given back right here, right after the real call
// returned and before the program sees p (see large.hpp).
template <Op op>
[[gnu::always_inline]] inline void recordCreate(uint8_t flags, uint64_t size, void* p,
                                                unsigned align) {
  if (size >= gLarge.threshold && p != nullptr) [[unlikely]] {
    const bool prepared = measureTouch(size) && releasePages(p, 0, size, gLarge.pageSize);
    if (noteLarge(reinterpret_cast<uintptr_t>(p), size, prepared)) flags |= kRawMark;
  }
  if (align != 0 || op == Op::Memalign) flags |= strata::trace::kFlagAligned;
  if (p == nullptr) flags |= strata::trace::kFlagFailed;
  if (ringsUsable() && pushEvent(op, flags, reinterpret_cast<uintptr_t>(p), size, align)) return;
  logCreate(op, flags, size, p, align);
}

// Logs free/delete of p and forgets p. Called BEFORE the real free: once the memory is back in
// the allocator, another thread's malloc may return the same address at once, and its event
// (and map entry) must come after this one, or the map would lose the new object and the
// trace would show the new object's id being freed. touched: see releaseLocked; it travels
// in the ring event's size (with kRawMark), so the Touch and the release are written
// together, one right after the other, whenever the ring is merged.
template <Op op>
inline void recordRelease(void* p, uint64_t touched) {
  const uint8_t flags = touched != kNoTouch ? kRawMark : 0;
  const uint64_t size = touched != kNoTouch ? touched : 0;
  if (ringsUsable() && pushEvent(op, flags, reinterpret_cast<uintptr_t>(p), size, 0)) return;
  logRelease(op, p, touched);
}

// The release of a block that may hold a large object: takes it out of the table of prepared
// objects (lock-free; its creator put it there before the program saw it), measures what the
// program touched (mincore walks the object's page table, outside the lock: a big object
// would hold up every other thread), then logs the release with it. Nobody else can free or
// change the object meanwhile: it is the caller's to free.
template <Op op>
[[gnu::noinline]] void recordLargeRelease(void* p) {
  const uint64_t size = gLarge.prepared.remove(reinterpret_cast<uintptr_t>(p));
  const uint64_t touched = size == 0 ? kNoTouch : touchedBytes(p, size, gLarge.pageSize);
  noteTouched(size, touched);
  recordRelease<op>(p, touched);
}

// Logs free/delete of p: the plain path, or the large one.
template <Op op>
inline void recordFree(void* p) {
  if (mayBeLarge(p)) [[unlikely]] {
    recordLargeRelease<op>(p);
    return;
  }
  recordRelease<op>(p, kNoTouch);
}

}  // namespace strata::record
