// The recorder's core: what every unit shares. The recording state, the recursion guard,
// the lock and the scalars every event reads or updates under it, the trace writer, the
// address map, and appending an event. Every other unit of toolkit/record builds on this one
// (docs/toolkit/recording.md, "How the recorder is built", lists them).
#pragma once
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <atomic>

#include "record/recorder/clock.hpp"
#include "record/recorder/lifecycle.hpp"
#include "record/recorder/lock.hpp"
#include "record/recorder/object_map.hpp"
#include "strata/trace/writer.hpp"

namespace strata::record {

using strata::trace::Op;
using Writer = strata::trace::TraceWriter<TraceFileSink>;

// Recorder states: not recording (no STRATA_TRACE_FILE, the file could not be opened, or not
// initialised yet), recording, or finished (trailer written; later calls pass straight through).
enum State : int { kOff = 0, kOn = 1, kDone = 2 };

// The lock, and the scalars every event reads or updates under it, on one cache line: the
// thread that takes the lock then holds them too, with no further transfer of cache lines
// between cores when threads take turns.
struct alignas(64) LockLine {
  RecorderLock lock;
  uint32_t generation = 1;  // bumped in a fork child: thread indexes handed out anew
  uint32_t nextThread = 0;  // next dense thread index
  uint64_t startNs = 0;     // the clock at the start of this process's trace
  uint64_t lastNs = 0;      // the last event's time (see eventTime)
};

// state is read by every call on every thread and hot written by every recorded call: each
// on a cache line of its own, so that taking the lock does not evict the state from the
// other threads' caches. The writer's fields that change per event fill one line.
// (The recorder's globals are declared hidden, like their definitions under
// -fvisibility=hidden: a plain extern declaration would be accessed through the GOT.)
struct Core {
  alignas(64) std::atomic<int> state{kOff};
  LockLine hot;
  alignas(64) unsigned char writerStorage[sizeof(Writer)] = {};
  Writer* writer = nullptr;
  unsigned char* buffer = nullptr;  // the writer's chunk buffer (kBufferBytes, mmap memory)
  ObjectMap map;                    // every live address the trace knows; under hot.lock
};
[[gnu::visibility("hidden")]] extern Core gCore;

// Chunk buffer: events are written out every 256 KiB (about 50 000 events), so a SIGKILL
// loses at most that much and every earlier chunk is valid on disk.
inline constexpr size_t kBufferBytes = size_t{256} << 10;

// Per thread: the recursion guard (non-zero while the recorder itself, or a forwarded Strata
// API call, runs: allocations made then are the recorder's or the library's, not the
// program's, and pass straight through unrecorded), whether this thread holds the lock (a
// signal handler must not try to flush then), and the dense thread index with the
// generation it was handed out in. initial-exec TLS: a preloaded library has static TLS, and
// access is a plain %fs-relative load (the general-dynamic model may call malloc). constinit:
// no dynamic initialisation, so other units read them without a TLS wrapper call.
#define STRATA_TLS thread_local __attribute__((tls_model("initial-exec")))
[[gnu::visibility("hidden")]] extern constinit STRATA_TLS int tGuard;
[[gnu::visibility("hidden")]] extern constinit STRATA_TLS bool tHoldsLock;
[[gnu::visibility("hidden")]] extern constinit STRATA_TLS uint32_t tThread;
[[gnu::visibility("hidden")]] extern constinit STRATA_TLS uint32_t tThreadGen;

// Whether the recorder is recording (the caller then takes the lock and checks again).
inline bool on() { return gCore.state.load(std::memory_order_relaxed) == kOn; }

// Whether the calling thread should record this call now.
inline bool recording() {
  return gCore.state.load(std::memory_order_acquire) == kOn && tGuard == 0;
}

// Raises the recursion guard for a scope.
struct Guard {
  Guard() { ++tGuard; }
  ~Guard() { --tGuard; }
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;
};

// Holds the lock for a scope; also keeps errno as the program left it (a failed write(2) in a
// flush must not show through as the errno of a successful malloc).
class Locked {
 public:
  Locked() : errno_(errno) {
    gCore.hot.lock.lock();
    tHoldsLock = true;
  }
  ~Locked() {
    tHoldsLock = false;
    gCore.hot.lock.unlock();
    errno = errno_;
  }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;
  // Keeps errno as it is now instead: after a real call made under the lock, whose errno
  // (ENOMEM from a failed realloc) the program must see.
  void keepErrno() { errno_ = errno; }

 private:
  int errno_;
};

// The calling thread's dense index, handed out at its first event (under the lock).
inline uint32_t threadIndex() {
  if (tThreadGen != gCore.hot.generation) {
    tThread = gCore.hot.nextThread++;
    tThreadGen = gCore.hot.generation;
  }
  return tThread;
}

// The time an event is written with, under the lock: t, or the last event's time if that is
// later (threads stamp their events before taking the lock, and the tsc clock may step when
// recalibrated), so time never runs backwards in the trace, on any thread. Also
// recalibrates the tsc clock when it is due.
inline uint64_t eventTime(uint64_t t) {
  calibrateIfDue(t);
  if (t < gCore.hot.lastNs) return gCore.hot.lastNs;
  gCore.hot.lastNs = t;
  return t;
}

// Appends one event (under the lock) stamped with time t; returns the id a creating event
// got. Through the writer's unchecked path: every event here is well formed by construction
// (the flags each call site sets are the ones its op allows, object / target ids come from
// the address map, which holds only ids the writer handed out, and a site is one the site
// table had the writer define, or kNoSite).
inline uint64_t appendAs(uint32_t thread, Op op, uint8_t flags, uint64_t t, uint64_t size,
                         uint64_t object, uint64_t target, unsigned align,
                         uint64_t site = strata::trace::kNoSite) {
  return gCore.writer->appendUnchecked(op, flags, thread, eventTime(t) - gCore.hot.startNs,
                                       object, target, size, static_cast<uint8_t>(align), site);
}
// appendAs for the two commonest events (the writer's straight-line forms): a creating op
// without a target, and the release of a known object.
[[gnu::always_inline]] inline uint64_t appendCreateAs(uint32_t thread, Op op, uint8_t flags,
                                                     uint64_t t, uint64_t size, unsigned align,
                                                     uint64_t site = strata::trace::kNoSite) {
  return gCore.writer->appendCreate(op, flags, thread, eventTime(t) - gCore.hot.startNs, size,
                                    static_cast<uint8_t>(align), site);
}
[[gnu::always_inline]] inline void appendReleaseAs(uint32_t thread, Op op, uint64_t t,
                                                   uint64_t object) {
  gCore.writer->appendRelease(op, thread, eventTime(t) - gCore.hot.startNs, object);
}
// appendAs for the calling thread.
inline uint64_t append(Op op, uint8_t flags, uint64_t t, uint64_t size, uint64_t object,
                       uint64_t target, unsigned align, uint64_t site = strata::trace::kNoSite) {
  return appendAs(threadIndex(), op, flags, t, size, object, target, align, site);
}

// ceil(log2(a)) for an alignment (a of 0 or 1 gives 0).
inline unsigned alignLog2(size_t a) {
  if (a <= 1) return 0;
  return static_cast<unsigned>(64 - __builtin_clzll(static_cast<unsigned long long>(a - 1)));
}

}  // namespace strata::record
