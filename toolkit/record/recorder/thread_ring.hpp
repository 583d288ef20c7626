// The calling thread's side of the event rings (rings.hpp): its ring, registered at its first
// ringed event and given back when it exits; pushing a raw event into it; and making room
// when it is full. Which events go into a ring and how a merge applies them is the events
// unit's business (events.hpp, calls.hpp).
#pragma once
#include <pthread.h>
#include <stdint.h>
#include <sys/single_threaded.h>

#include "record/recorder/clock.hpp"
#include "record/recorder/core.hpp"
#include "record/recorder/rings.hpp"

namespace strata::record {

// set: every ring (under the lock). enabled: the tsc clock is in use, so rings may be used.
// key: its destructor drains and gives back an exiting thread's ring.
struct ThreadRings {
  RingSet set;
  bool enabled = false;
  pthread_key_t key = 0;
};
[[gnu::visibility("hidden")]] extern ThreadRings gRings;

[[gnu::visibility("hidden")]] extern constinit STRATA_TLS Ring* tRing;
// Whether this thread's ring was given back (it is exiting).
[[gnu::visibility("hidden")]] extern constinit STRATA_TLS bool tNoRing;

// Enables the rings (at start, with the tsc clock): creates the key whose destructor gives
// back an exiting thread's ring. False when it could not.
bool enableRings() noexcept;

// Whether the calling thread logs plain creates and releases into its ring.
inline bool ringsUsable() {
  return gRings.enabled && !tNoRing && tscCalibrated();
}

// The calling thread's ring, registered (or recycled from an exited thread) under the lock;
// nullptr when there is none (not recording, or no memory).
[[gnu::noinline]] Ring* registerRing() noexcept;

// The ring is full: merges every ring under the lock (or, once recording is over, drops the
// thread's events). False when the ring is still full.
[[gnu::noinline]] bool makeRoom(Ring* r) noexcept;

// Logs a create or release into the calling thread's ring, stamped now. False when the thread
// has no ring: the caller takes the lock instead.
inline bool pushEvent(Op op, uint8_t flags, uintptr_t addr, uint64_t size, unsigned align) {
  Ring* r = tRing;
  if (r == nullptr) [[unlikely]] {
    r = registerRing();
    if (r == nullptr) return false;
  }
  if (!r->hasRoom()) [[unlikely]] {
    if (!makeRoom(r)) return false;
  }
  r->push(RawEvent{stampTsc(op != Op::Free && op != Op::Delete), addr, size,
                   static_cast<uint8_t>(op), flags, static_cast<uint8_t>(align)});
  return true;
}

// Gives the calling thread's ring back (under the lock, its events merged or to be dropped)
// and uses none from now on: the thread is ending.
void giveBackOwnRing() noexcept;

// In a fork child: the other threads' rings belong to threads the child does not have, so
// they are emptied and free for reuse (the parent writes their events); the forking thread
// keeps its ring, emptied too.
void resetRingsAfterFork() noexcept;

}  // namespace strata::record
