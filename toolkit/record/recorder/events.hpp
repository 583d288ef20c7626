// Events over the map and the writer: what a create, a release or a resize does to the
// address map and the trace, under the recorder's lock, and the merge that applies the
// threads' ring events (rings.hpp) the same way. The call paths that decide between a ring
// and the lock are in calls.hpp; reaps (reaps.hpp) and the fork child build on these too.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "record/recorder/core.hpp"
#include "record/recorder/drag.hpp"
#include "record/recorder/large.hpp"
#include "record/recorder/thread_ring.hpp"

namespace strata::record {

// Marks a raw ring event (and the flags createLocked is given): on a create, the object was
// prepared (large.hpp); on a release, its size field holds the touched bytes. The bit of
// kFlagSameThread, which never appears in an event's flags: stripped before the writer sees
// them.
inline constexpr uint8_t kRawMark = 0x80;

// Releases of an address the map does not hold, kept for a short while (under the lock).
// The rings are merged in time-stamp order, which is causal order when the CPUs' TSCs agree;
// on a machine where they disagree by a little (virtual machines), a thread's free of an
// object another thread created just before can be stamped below that create, and is merged
// first. Rather than drop it, the merge parks it; a create of the same address by another
// thread within the next two merges takes it (the create is written, then the release), and
// after that it is taken for what it usually is, the release of an object allocated before
// recording began, and dropped. Same-thread events are never out of order, so a create by
// the releasing thread itself (glibc's per-thread cache hands the address straight back)
// does not take it.
struct ParkedRelease {
  uintptr_t addr;
  uint64_t touched;
  uint32_t thread;
  Op op;
  uint8_t merges;  // merges it has waited through
};
struct Parked {
  static constexpr size_t kMax = 64;
  ParkedRelease items[kMax] = {};
  size_t count = 0;
};
[[gnu::visibility("hidden")]] extern Parked gParked;


// Writes the release parked for p by a thread other than `thread`, if any, stamped t (a
// create of p by `thread` has just been written).
[[gnu::noinline]] void takeParked(uint32_t thread, uintptr_t p, uint64_t t) noexcept;
// Parks the release of p, an address the map does not hold (the oldest parked one goes when
// they are many).
[[gnu::noinline]] void park(uint32_t thread, Op op, uintptr_t p, uint64_t touched) noexcept;

// Logs (under the lock) a creating call of thread `thread`, stamped t, that returned p, with
// its flags already complete (kFlagAligned, kFlagFailed, kFlagNull, and kRawMark when p was
// prepared), and maps p to its id; then a release parked for p by another thread, if any.
// site: the call's allocation site (site_recording.hpp), kNoSite without. Inline, as releaseLocked:
// with the lock paths of calls.hpp and the merge, these are the recorder's per-event work.
[[gnu::always_inline]] inline void createLocked(uint32_t thread, Op op, uint8_t flags, uint64_t t,
                                                uint64_t size, uintptr_t p, unsigned align,
                                                uint64_t site = strata::trace::kNoSite) {
  flags &= static_cast<uint8_t>(~kRawMark);
  const uint64_t id = appendCreateAs(thread, op, flags, t, size, align, site);
  if (p != 0 && id < Writer::kRejected) {
    gCore.map.insert(Entry{p, id, size, makeMeta(kNoObject, false, align)});
    dragCreate(id, p, size);
    if (gParked.count != 0) [[unlikely]]
      takeParked(thread, p, t);
  }
}

// Logs (under the lock) a release (free, delete) of p by thread `thread`, stamped t, and
// forgets p; an unknown p is parked and in the end skipped: allocated before recording
// started, or by the recorder. touched: the bytes of p's object the program touched,
// measured before the real free, or kNoTouch; when given, a Touch event comes right before
// the release.
inline void releaseLocked(uint32_t thread, Op op, uint64_t t, uintptr_t p, uint64_t touched) {
  if (p == 0) {
    appendAs(thread, op, strata::trace::kFlagNull, t, 0, kNoObject, kNoObject, 0);
    return;
  }
  Entry e;
  if (!gCore.map.take(p, &e)) {
    park(thread, op, p, touched);
    return;
  }
  if (touched != kNoTouch) [[unlikely]]
    appendAs(thread, Op::Touch, 0, t, touched < e.size ? touched : e.size, e.id, kNoObject, 0);
  appendReleaseAs(thread, op, t, e.id);
  dragRelease(p);
}

// Writes every ring's published events stamped before now (everything: whatever their stamp)
// into the map and the trace, in time-stamp order, under the lock with the state kOn. Events
// published later, or stamped after the merge began, stay for the next merge.
[[gnu::noinline]] void drainRingsSlow(bool everything = false) noexcept;

// drainRingsSlow when any ring exists (under the lock, state kOn): every path that writes an
// event directly calls it first, so that the events threads logged before are written first.
inline void drainRings() {
  if (gRings.set.any()) drainRingsSlow();
}

// Drains until ring r (the calling thread's, about to be given back) is empty. Its events
// were all stamped before this call, but on a machine whose cores' TSCs disagree slightly
// (virtual machines) the bound read on this core can be below a stamp taken on another: then
// the drain is repeated as the clock moves on, and after a while forced, rather than giving
// the ring back dropping the events.
void drainOwnRing(Ring* r) noexcept;

// realloc-like calls: `call(old, size)` (the real resize; old is non-null) runs under the
// lock, from before it until its event is logged (events.cpp says why); returns its result.
void* recordResize(Op op, void* old, uint64_t size, void* (*call)(void*, size_t)) noexcept;

// In a fork child: forgets the parked releases (the parent's trace's business).
void forgetParked() noexcept;

}  // namespace strata::record
