// fork (lifecycle.hpp): the lock is held across fork() so the child's copy of the recorder is
// consistent; the child starts a trace of its own, FILE.<pid>, which begins by re-creating
// the objects (and reaps) it inherited, so that it is self-contained.

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include "record/recorder/events.hpp"
#include "record/recorder/lifecycle.hpp"
#include "record/recorder/mapped_memory.hpp"
#include "record/recorder/site_recording.hpp"
#include "strata/platform/memory.hpp"

namespace strata::record {

using strata::trace::kFlagAligned;
using strata::trace::kFlagNull;

// fork, before: holds gCore.hot.lock across fork (so the child's copy of the map and writer is
// consistent) and writes out the buffer, so the child, which starts a trace of its own,
// cannot write the parent's pending events a second time.
void beforeFork() noexcept {
  if (gCore.state.load(std::memory_order_acquire) != kOn) return;
  sitesBeforeFork();
  gCore.hot.lock.lock();
  tHoldsLock = true;
  drainRings();
  gCore.writer->flush();
}

// fork, in the parent: lets go of the lock.
void afterForkParent() noexcept {
  if (!tHoldsLock) return;
  tHoldsLock = false;
  gCore.hot.lock.unlock();
}

namespace {

// Re-creates the live objects the child inherited, at the start of its trace, so that the
// child's trace is self-contained: reaps first, parents before children (in order of their
// old ids, as a parent is always created before its child), then every object, and each map
// entry takes its new id.
void recreateLiveObjects() {
  // Every reap is a rare entry: the side table's scan finds them all.
  const size_t cap = gCore.map.rareCapacity();
  Entry* s = gCore.map.rareSlots();
  size_t reaps = 0;
  for (size_t i = 0; i < cap; ++i)
    if (s[i].addr != 0 && metaIsReap(s[i].meta)) ++reaps;
  struct Renamed {
    uint64_t oldId, newId;
  };
  Renamed* ren = nullptr;
  if (reaps != 0) {
    ren = static_cast<Renamed*>(mapPages(reaps * sizeof(Renamed)));
    if (ren == nullptr) return;
  }
  size_t k = 0;
  for (size_t i = 0; i < cap; ++i)
    if (s[i].addr != 0 && metaIsReap(s[i].meta)) ren[k++] = Renamed{s[i].id, kNoObject};
  std::sort(ren, ren + reaps, [](const Renamed& a, const Renamed& b) { return a.oldId < b.oldId; });
  auto renamed = [&](uint64_t oldId) -> uint64_t {
    if (oldId == kNoObject) return kNoObject;
    const Renamed* it = std::lower_bound(ren, ren + reaps, oldId,
                                         [](const Renamed& a, uint64_t v) { return a.oldId < v; });
    return (it != ren + reaps && it->oldId == oldId) ? it->newId : kNoObject;
  };
  const uint64_t t = nowNs();
  // Reaps, in old-id order: each one's parent already has its new id.
  for (size_t r = 0; r < reaps; ++r) {
    for (size_t i = 0; i < cap; ++i) {
      if (s[i].addr == 0 || !metaIsReap(s[i].meta) || s[i].id != ren[r].oldId) continue;
      const uint64_t parent = renamed(s[i].size);
      ren[r].newId = append(Op::ReapCreate, parent == kNoObject ? kFlagNull : 0, t, 0, kNoObject,
                            parent, 0);
      break;
    }
  }
  gCore.map.forEach([&](Entry& e) {
    if (metaIsReap(e.meta)) {
      e.size = renamed(e.size);
      e.id = renamed(e.id);
      return;
    }
    const unsigned align = metaAlign(e.meta);
    const uint64_t reap = renamed(metaReap(e.meta));
    if (reap != kNoObject) {
      e.id = append(Op::ReapMalloc, 0, t, e.size, kNoObject, reap, 0);
    } else {
      e.id = append(align != 0 ? Op::Memalign : Op::Malloc, align != 0 ? kFlagAligned : 0, t,
                    e.size, kNoObject, kNoObject, align);
    }
    e.meta = makeMeta(reap, false, align);
  });
  if (ren != nullptr) platform::unmap(ren, reaps * sizeof(Renamed));
}

}  // namespace

// fork, in the child: the lock is new and free, the trace is FILE.<pid> of its own, starting
// with the objects it inherited. If the file cannot be opened the child runs unrecorded.
void afterForkChild() noexcept {
  gCore.hot.lock.reset();
  tHoldsLock = false;
  // The other threads' rings belong to threads the child does not have: emptied and free for
  // reuse (the parent writes their events). The forking thread keeps its ring, emptied too.
  resetRingsAfterFork();
  forgetParked();  // releases the parent merged are the parent's trace's business
  sitesAfterForkChild();
  if (gCore.state.load(std::memory_order_acquire) != kOn) return;
  Guard g;
  ::close(gTraceFile.fd);
  gTraceFile.pid = static_cast<pid_t>(::syscall(SYS_getpid));
  if (!openTrace()) {
    gCore.state.store(kOff, std::memory_order_release);
    return;
  }
  startWriter();
  if (tRing != nullptr) tRing->thread = threadIndex();
  recreateLiveObjects();
}

}  // namespace strata::record
