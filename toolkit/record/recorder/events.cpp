// Events over the map and the writer (events.hpp): creates, releases, resizes and the ring
// merge, all under the recorder's lock.
#include "record/recorder/events.hpp"

#include "record/recorder/site_recording.hpp"
#include "record/recorder/touch.hpp"
#include "record/recorder/touch_sampling.hpp"

namespace strata::record {

constinit Parked gParked;

using strata::trace::kFlagFailed;

namespace {

// Ages the parked releases at the end of a merge; drops those that waited two.
void ageParked() {
  size_t kept = 0;
  for (size_t i = 0; i < gParked.count; ++i)
    if (++gParked.items[i].merges < 2) gParked.items[kept++] = gParked.items[i];
  gParked.count = kept;
}

// What a merge does with each ring event: the same as the lock paths do with a call.
struct ApplyToTrace {
  void prefetch(uint64_t addr) const { gCore.map.prefetch(addr); }
  void operator()(uint32_t thread, const RawEvent& e) const {
    const uint64_t t = tscToNsLocked(e.tsc);
    const Op op = static_cast<Op>(e.op);
    if (op == Op::Free || op == Op::Delete) {
      releaseLocked(thread, op, t, e.addr, (e.flags & kRawMark) ? e.size : kNoTouch);
    } else {
      createLocked(thread, op, e.flags, t, e.size, e.addr, e.align);
    }
  }
};

}  // namespace

void takeParked(uint32_t thread, uintptr_t p, uint64_t t) noexcept {
  for (size_t i = 0; i < gParked.count; ++i) {
    if (gParked.items[i].addr != p || gParked.items[i].thread == thread) continue;
    const ParkedRelease r = gParked.items[i];
    gParked.items[i] = gParked.items[--gParked.count];
    releaseLocked(r.thread, r.op, t, p, r.touched);  // stamped t: time never goes back
    break;
  }
}

void park(uint32_t thread, Op op, uintptr_t p, uint64_t touched) noexcept {
  if (gParked.count == Parked::kMax) gParked.items[0] = gParked.items[--gParked.count];
  gParked.items[gParked.count++] = ParkedRelease{p, touched, thread, op, 0};
}

void drainRingsSlow(bool everything) noexcept {
  const uint64_t bound = everything ? ~uint64_t{0} : mergeBound();
  ApplyToTrace apply;
  gRings.set.merge(bound, apply);
  if (gParked.count != 0) ageParked();
}

void drainOwnRing(Ring* r) noexcept {
  for (unsigned tries = 0; !r->drained(); ++tries) {
    if (tries < 1000) {
      strata::detail::cpu_relax();
      drainRingsSlow();
    } else {
      drainRingsSlow(true);
      break;
    }
  }
}

// The real call runs under the lock because the real realloc frees the old block when it
// moves it; without the lock another thread could be handed that address and log its malloc
// before this realloc's event, which names the old object: the map would then drop the
// other thread's object. With rings: the merge before the call writes the old block's
// creation (logged by whichever thread made it); the old block leaves the map before the
// call, and the merge after it writes the releases of the new block (published before that
// block was freed) while a malloc that got the old block (stamped after the call began) only
// finds an address the map no longer holds.
// Large objects: what the program touched of the old one is measured before the call (the
// call copies it, or moves its pages), and written as a Touch right before the realloc event
// when the old object ends (the call succeeded, or size 0 freed it). The new block is
// prepared when it is large: its part beyond the old size is unspecified and given back; the
// part up to the old size holds the old contents, and counts as touched wherever the copy
// made it resident (an old object that was large but not prepared leaves the new one
// unprepared: its pages say nothing). With sites on, the stack is walked first, outside the
// lock, and the new object's event (or the failed one's) carries its site.
void* recordResize(Op op, void* old, uint64_t size, void* (*call)(void*, size_t)) noexcept {
  SiteStack stack;
  if (gSites.on) [[unlikely]]
    captureSite(&stack);
  const uint64_t t = nowNs();
  Locked lock;
  const bool recordingNow = on();
  const uintptr_t oldAddr = reinterpret_cast<uintptr_t>(old);
  Entry e;
  bool known = false;
  uint64_t oldPrepared = 0;     // the old object's size when it was a prepared large object
  uint64_t touched = kNoTouch;  // what the program touched of it
  if (recordingNow) {
    drainRings();
    known = gCore.map.take(oldAddr, &e);
    if (known && e.size >= gLarge.threshold) [[unlikely]] {
      const uint64_t s = gLarge.prepared.remove(oldAddr);
      oldPrepared = isPrepared(e, s) ? s : 0;
      if (oldPrepared != 0) touched = touchedBytes(old, oldPrepared, gLarge.pageSize);
      noteTouched(oldPrepared, touched);
    }
  }
  void* q = call(old, static_cast<size_t>(size));
  lock.keepErrno();
  if (!recordingNow) return q;
  const auto newAddr = reinterpret_cast<uintptr_t>(q);
  bool newPrepared = false;
  if (known && q != nullptr && size >= gLarge.threshold) [[unlikely]] {
    newPrepared = (e.size < gLarge.threshold || oldPrepared != 0) && measureTouch(size) &&
                  releasePages(q, e.size, size, gLarge.pageSize);
  }
  drainRings();
  const uint64_t site = siteOf(stack);
  if (!known) {  // the old block is unknown: the result is simply a new object
    if (q != nullptr && size >= gLarge.threshold) [[unlikely]]
      noteLarge(newAddr, size, false);
    if (q != nullptr) createLocked(threadIndex(), Op::Malloc, 0, t, size, newAddr, 0, site);
    return q;
  }
  const uint64_t oldId = e.id;
  if (q == nullptr) {
    if (size != 0) {  // the old block is untouched (realloc(p, 0) freed it)
      append(op, kFlagFailed, t, size, kNoObject, oldId, 0, site);
      gCore.map.insert(e);
      if (oldPrepared != 0) gLarge.prepared.add(oldAddr, oldPrepared);
      return q;
    }
    if (touched != kNoTouch) append(Op::Touch, 0, t, touched, oldId, kNoObject, 0);
    append(op, kFlagFailed, t, size, kNoObject, oldId, 0, site);
    dragRelease(oldAddr);
    return q;
  }
  if (touched != kNoTouch) append(Op::Touch, 0, t, touched, oldId, kNoObject, 0);
  const uint64_t id = append(op, 0, t, size, kNoObject, oldId, 0, site);
  if (size >= gLarge.threshold) [[unlikely]]
    noteLarge(newAddr, size, newPrepared && id < Writer::kRejected);
  dragRelease(oldAddr);  // first: the new object may be at the same address
  if (id < Writer::kRejected) {
    gCore.map.insert(Entry{newAddr, id, size, makeMeta(kNoObject, false, 0)});
    dragCreate(id, newAddr, size);
  }
  return q;
}

void forgetParked() noexcept { gParked.count = 0; }

}  // namespace strata::record
