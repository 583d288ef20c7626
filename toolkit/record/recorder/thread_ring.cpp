// The calling thread's ring (thread_ring.hpp): registration, giving it back at thread exit,
// and making room when it is full.
#include "record/recorder/thread_ring.hpp"

#include <errno.h>
#include <sched.h>

#include "record/recorder/events.hpp"

namespace strata::record {

constinit ThreadRings gRings;
constinit STRATA_TLS Ring* tRing = nullptr;
constinit STRATA_TLS bool tNoRing = false;

namespace {

// The ring key's destructor, at thread exit: writes out the thread's events (and every other
// ring's) and gives its ring back; the thread's last calls (TLS teardown) take the lock.
void ringThreadExit(void* p) {
  auto* r = static_cast<Ring*>(p);
  Guard g;
  Locked lock;
  if (on()) drainOwnRing(r);
  gRings.set.release(r);
  tRing = nullptr;
  tNoRing = true;
}

}  // namespace

bool enableRings() noexcept {
  gRings.enabled = ::pthread_key_create(&gRings.key, ringThreadExit) == 0;
  return gRings.enabled;
}

Ring* registerRing() noexcept {
  Guard g;  // pthread_setspecific may allocate
  Locked lock;
  if (!on()) return nullptr;
  Ring* r = gRings.set.acquire(threadIndex());
  if (r == nullptr) return nullptr;
  ::pthread_setspecific(gRings.key, r);
  tRing = r;
  return r;
}

// While another thread holds the lock it is usually merging, this ring included (its events
// are stamped before that merge began): the thread waits for room in its ring or for the
// lock, whichever comes first, instead of queueing for the lock to find its ring empty.
bool makeRoom(Ring* r) noexcept {
  for (unsigned spins = 0;; ++spins) {
    if (r->backlog() < kRingEvents / 2) return true;
    if (gCore.hot.lock.tryLock()) break;
    if (spins < 4096) {
      strata::detail::cpu_relax();
    } else {
      ::sched_yield();
    }
  }
  const int savedErrno = errno;
  tHoldsLock = true;
  if (on()) {
    drainRings();
  } else {
    r->dropAll();
  }
  tHoldsLock = false;
  gCore.hot.lock.unlock();
  errno = savedErrno;
  return r->backlog() < kRingEvents;
}

void giveBackOwnRing() noexcept {
  Ring* r = tRing;
  if (r == nullptr) return;
  gRings.set.release(r);
  tRing = nullptr;
  tNoRing = true;
  ::pthread_setspecific(gRings.key, nullptr);
}

void resetRingsAfterFork() noexcept { gRings.set.resetAfterFork(tRing); }

}  // namespace strata::record
