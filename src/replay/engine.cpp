// The replay engine (engine.hpp): plan windows from PlanDecoder, the replay loop over them
// (one thread; a fixed pool with cross-thread waits; or one OS thread per recorded thread,
// started and ended as the program's were), and the measurements.
#include "engine.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <pthread.h>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <thread>
#include <vector>

#include "measure.hpp"
#include "own_memory.hpp"
#include "plan.hpp"
#include "scan.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace strata::replay {
namespace {

// ---- allocator policies: static functions, so the loop inlines the calls ----

// The process's allocator, by its standard entry points.
struct SystemPolicy {
  static void* malloc(std::size_t n) noexcept { return std::malloc(n); }
  static void* calloc(std::size_t n) noexcept { return std::calloc(n, 1); }
  static void* realloc(void* p, std::size_t n) noexcept { return std::realloc(p, n); }
  static void* memalign(std::size_t align, std::size_t n) noexcept {
    void* p = nullptr;
    if (align < sizeof(void*)) align = sizeof(void*);
    return ::posix_memalign(&p, align, n) == 0 ? p : nullptr;
  }
  static void* opNew(std::size_t n) noexcept { return ::operator new(n, std::nothrow); }
  static void* opNewAligned(std::size_t n, std::size_t align) noexcept {
    return ::operator new(n, std::align_val_t(align), std::nothrow);
  }
  static void free(void* p) noexcept { std::free(p); }
  static void opDelete(void* p) noexcept { ::operator delete(p); }
  static void opDeleteAligned(void* p, std::size_t align) noexcept {
    ::operator delete(p, std::align_val_t(align));
  }
};

// The do-nothing allocator: every allocation returns the same non-null, maximally aligned
// address; frees do nothing. Replaying on it measures the harness alone.
alignas(4096) unsigned char gNoneBlock[64];
struct NonePolicy {
  static void* malloc(std::size_t) noexcept { return gNoneBlock; }
  static void* calloc(std::size_t) noexcept { return gNoneBlock; }
  static void* realloc(void*, std::size_t) noexcept { return gNoneBlock; }
  static void* memalign(std::size_t, std::size_t) noexcept { return gNoneBlock; }
  static void* opNew(std::size_t) noexcept { return gNoneBlock; }
  static void* opNewAligned(std::size_t, std::size_t) noexcept { return gNoneBlock; }
  static void free(void*) noexcept {}
  static void opDelete(void*) noexcept {}
  static void opDeleteAligned(void*, std::size_t) noexcept {}
};

// ---- allocator time: a cheap clock around each allocator call (threaded replays) ----

// The clock: the time-stamp counter where there is one (a few ns to read), else the
// monotonic clock in ns. Ticks become seconds by a rate calibrated over the replay.
inline std::uint64_t ticks() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
#endif
}

// Ticks and calls spent in allocator calls by this thread since it last handed them over
// (collectAllocatorTime).
thread_local std::uint64_t tAllocTicks = 0;
thread_local std::uint64_t tAllocCalls = 0;

// P with each call timed. Only the call: waiting for another thread's object happens in the
// loop's lookup, before the call, and is not counted.
template <class P>
struct Timed {
  template <class F>
  static auto timed(F&& f) noexcept {
    const std::uint64_t t0 = ticks();
    auto r = f();
    tAllocTicks += ticks() - t0;
    ++tAllocCalls;
    return r;
  }
  template <class F>
  static void timedVoid(F&& f) noexcept {
    const std::uint64_t t0 = ticks();
    f();
    tAllocTicks += ticks() - t0;
    ++tAllocCalls;
  }
  static void* malloc(std::size_t n) noexcept { return timed([&] { return P::malloc(n); }); }
  static void* calloc(std::size_t n) noexcept { return timed([&] { return P::calloc(n); }); }
  static void* realloc(void* p, std::size_t n) noexcept { return timed([&] { return P::realloc(p, n); }); }
  static void* memalign(std::size_t a, std::size_t n) noexcept {
    return timed([&] { return P::memalign(a, n); });
  }
  static void* opNew(std::size_t n) noexcept { return timed([&] { return P::opNew(n); }); }
  static void* opNewAligned(std::size_t n, std::size_t a) noexcept {
    return timed([&] { return P::opNewAligned(n, a); });
  }
  static void free(void* p) noexcept { timedVoid([&] { P::free(p); }); }
  static void opDelete(void* p) noexcept { timedVoid([&] { P::opDelete(p); }); }
  static void opDeleteAligned(void* p, std::size_t a) noexcept {
    timedVoid([&] { P::opDeleteAligned(p, a); });
  }
};

// The clock's own cost per timed call, in ticks: timed calls of the do-nothing allocator
// (the median of a few batches, so one preempted batch does not count).
double clockOverheadTicks() noexcept {
  double batch[7];
  for (double& b : batch) {
    tAllocTicks = tAllocCalls = 0;
    for (int i = 0; i < 4096; ++i) {
      void* p = Timed<NonePolicy>::malloc(16);
      __asm__ volatile("" : : "r"(p) : "memory");
    }
    b = static_cast<double>(tAllocTicks) / static_cast<double>(tAllocCalls);
  }
  tAllocTicks = tAllocCalls = 0;
  std::sort(std::begin(batch), std::end(batch));
  return batch[3];
}

// Object table value meaning "not created yet" in threaded replay (never a real pointer:
// misaligned and in the last page).
void* const kPending = reinterpret_cast<void*>(~std::uintptr_t{0});
constexpr unsigned char kFillByte = 0xA5;

// A slot some thread sleeps on, waiting for its creator (threaded replay only).
void* const kWaited = reinterpret_cast<void*>(~std::uintptr_t{0} - 1);

// Whether a slot value is one of the two "not created yet" sentinels.
inline bool notReady(void* p) noexcept {
  return reinterpret_cast<std::uintptr_t>(p) >= reinterpret_cast<std::uintptr_t>(kWaited);
}

// The low 32 bits of an object-table slot, the word a waiting thread sleeps on (x86-64 and
// every little-endian target: the low half comes first; a real pointer's low half is never
// kWaited's, 0xfffffffe, which is not 8-byte aligned).
int* slotWord(void** slot) noexcept { return reinterpret_cast<int*>(slot); }

// Sleeps while the slot still holds kWaited (at most 10 ms a call).
void futexWait(void** slot) noexcept {
  const timespec timeout{0, 10'000'000};
  ::syscall(SYS_futex, slotWord(slot), FUTEX_WAIT_PRIVATE, static_cast<int>(0xfffffffeu), &timeout,
            nullptr, 0);
}

// Wakes every thread sleeping on the slot.
void futexWake(void** slot) noexcept {
  ::syscall(SYS_futex, slotWord(slot), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

// How long a threaded replay spins on an object not yet published before it sleeps:
// long when every replay thread has a core (the creator is running and will publish soon),
// short when there are more replay threads than cores (the creator may need this core).
// Set once per replay, before any replay thread starts.
unsigned gSpinLimit = 256;

// What one replay thread counted; padded so threads do not share a cache line.
struct alignas(64) ThreadCounts {
  std::uint64_t failedAllocations = 0;
  std::uint64_t verifyErrors = 0;
  std::uint64_t allocTicks = 0;  // timed replays: ticks inside allocator calls
  std::uint64_t allocCalls = 0;  // and the number of calls timed
};

// Moves this thread's allocator time into c (after each window it replays).
void collectAllocatorTime(ThreadCounts& c) noexcept {
  c.allocTicks += tAllocTicks;
  c.allocCalls += tAllocCalls;
  tAllocTicks = tAllocCalls = 0;
}

// The --verify pattern: byte i of object id is (h(id) + i) mod 256, so two overlapping
// objects, or an object moved to the wrong offset, differ somewhere.
inline unsigned char patternBase(std::uint32_t id) noexcept {
  return static_cast<unsigned char>((id * 2654435761u) >> 24);
}
void fillPattern(void* p, std::uint32_t id, std::uint64_t n) noexcept {
  auto* b = static_cast<unsigned char*>(p);
  const unsigned char h = patternBase(id);
  for (std::uint64_t i = 0; i < n; ++i) b[i] = static_cast<unsigned char>(h + i);
}
bool checkPattern(const void* p, std::uint32_t id, std::uint64_t n) noexcept {
  const auto* b = static_cast<const unsigned char*>(p);
  const unsigned char h = patternBase(id);
  for (std::uint64_t i = 0; i < n; ++i)
    if (b[i] != static_cast<unsigned char>(h + i)) return false;
  return true;
}
bool allZero(const void* p, std::uint64_t n) noexcept {
  const auto* b = static_cast<const unsigned char*>(p);
  for (std::uint64_t i = 0; i < n; ++i)
    if (b[i] != 0) return false;
  return true;
}

// The replay loop over one thread's operations of one window. Template parameters fix every
// choice at compile time, so the single-thread loop is a switch over plain calls with no
// atomics or function pointers. kThreaded: objects may come from other threads; a use waits
// until the creating thread has published the pointer (see publish and lookup).
template <class P, bool kWrite, bool kVerify, bool kThreaded>
class Loop {
  static constexpr std::uint64_t kWholeObject = ~std::uint64_t{0};

 public:
  static void run(const PlanOp* op, const PlanOp* end, void** table, const std::uint64_t* sizes,
                  ThreadCounts& c) noexcept {
    // Bytes to write of the next object created: all of it unless a Touch op said less.
    std::uint64_t touched = kWholeObject;
    for (; op != end; ++op) {
      const std::uint64_t w = op->word;
      const std::uint64_t size = w >> 16;
      const std::uint32_t id = op->object;
      switch (static_cast<OpKind>(w & 0xff)) {
        case OpKind::Touch:
          touched = size;
          continue;
        case OpKind::Malloc:
          created(P::malloc(size), id, size, touched, table, c);
          break;
        case OpKind::Calloc: {
          void* p = P::calloc(size);
          if constexpr (kVerify)
            if (p != nullptr && !allZero(p, size)) ++c.verifyErrors;
          created(p, id, size, touched, table, c);
          break;
        }
        case OpKind::Memalign: {
          const std::size_t align = std::size_t{1} << ((w >> 8) & 0xff);
          void* p = P::memalign(align, size);
          if constexpr (kVerify)
            if (p != nullptr && (reinterpret_cast<std::uintptr_t>(p) & (align - 1)) != 0)
              ++c.verifyErrors;
          created(p, id, size, touched, table, c);
          break;
        }
        case OpKind::New:
          created(P::opNew(size), id, size, touched, table, c);
          break;
        case OpKind::NewAligned: {
          const std::size_t align = std::size_t{1} << ((w >> 8) & 0xff);
          void* p = P::opNewAligned(size, align);
          if constexpr (kVerify)
            if (p != nullptr && (reinterpret_cast<std::uintptr_t>(p) & (align - 1)) != 0)
              ++c.verifyErrors;
          created(p, id, size, touched, table, c);
          break;
        }
        case OpKind::Realloc: {
          const std::uint32_t oldId = op->other;
          void* old = lookup(table, oldId);
          if (old == nullptr) {
            publish(table, id, nullptr);
            touched = kWholeObject;
            break;
          }
          const std::uint64_t oldSize = sizes[oldId];
          void* p = P::realloc(old, size);
          if (p == nullptr) {
            if (size != 0) {
              ++c.failedAllocations;
              P::free(old);
            }
            publish(table, id, nullptr);
            touched = kWholeObject;
            break;
          }
          if constexpr (kVerify) {
            if (!checkPattern(p, oldId, std::min(oldSize, size))) ++c.verifyErrors;
            fillPattern(p, id, size);
          } else if constexpr (kWrite) {
            // The part of [old size, touched bytes) beyond the old size.
            const std::uint64_t upTo = std::min(size, touched);
            if (upTo > oldSize) std::memset(static_cast<char*>(p) + oldSize, kFillByte, upTo - oldSize);
          }
          publish(table, id, p);
          touched = kWholeObject;
          break;
        }
        case OpKind::Free: {
          void* p = lookup(table, id);
          if (p == nullptr) break;
          if constexpr (kVerify)
            if (!checkPattern(p, id, sizes[id])) ++c.verifyErrors;
          P::free(p);
          break;
        }
        case OpKind::Delete: {
          void* p = lookup(table, id);
          if (p == nullptr) break;
          if constexpr (kVerify)
            if (!checkPattern(p, id, sizes[id])) ++c.verifyErrors;
          P::opDelete(p);
          break;
        }
        case OpKind::DeleteAligned: {
          void* p = lookup(table, id);
          if (p == nullptr) break;
          if constexpr (kVerify)
            if (!checkPattern(p, id, sizes[id])) ++c.verifyErrors;
          P::opDeleteAligned(p, std::size_t{1} << ((w >> 8) & 0xff));
          break;
        }
      }
    }
  }

 private:
  // Stores a new object's pointer. Threaded: an exchange, and a futex wake when a thread
  // marked the slot as waited for (see lookup); no system call otherwise.
  static void publish(void** table, std::uint32_t id, void* p) noexcept {
    if constexpr (kThreaded) {
      if (__atomic_exchange_n(&table[id], p, __ATOMIC_ACQ_REL) == kWaited) futexWake(&table[id]);
    } else {
      table[id] = p;
    }
  }

  // The pointer of an existing object. Threaded: waits until its creator published it: spins
  // briefly, then marks the slot kWaited (compare-and-swap from kPending) and sleeps on a
  // futex on the slot's low 32 bits while it still holds kWaited. The creator's exchange sees
  // the mark and wakes the sleepers; the 10 ms timeout is only a safety net.
  static void* lookup(void** table, std::uint32_t id) noexcept {
    if constexpr (kThreaded) {
      void* p = __atomic_load_n(&table[id], __ATOMIC_ACQUIRE);
      for (unsigned spins = 0; notReady(p) && spins < gSpinLimit; ++spins) {
        __builtin_ia32_pause();
        p = __atomic_load_n(&table[id], __ATOMIC_ACQUIRE);
      }
      while (notReady(p)) {
        if (p == kPending &&
            !__atomic_compare_exchange_n(&table[id], &p, kWaited, false, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE))
          continue;  // p now holds the slot's current value: published, or marked
        futexWait(&table[id]);
        p = __atomic_load_n(&table[id], __ATOMIC_ACQUIRE);
      }
      return p;
    } else {
      return table[id];
    }
  }

  // Writes a new object (its first `touched` bytes; --verify: all of it, so every byte can
  // be checked), or counts a failure, and publishes it. Resets touched for the next object.
  static void created(void* p, std::uint32_t id, std::uint64_t size, std::uint64_t& touched,
                      void** table, ThreadCounts& c) noexcept {
    if (p == nullptr) {
      if (size != 0) ++c.failedAllocations;
    } else if constexpr (kVerify) {
      fillPattern(p, id, size);
    } else if constexpr (kWrite) {
      std::memset(p, kFillByte, std::min(size, touched));
    }
    touched = kWholeObject;
    publish(table, id, p);
  }
};

// One replay thread's run function for a window.
using RunFn = void (*)(const PlanOp*, const PlanOp*, void**, const std::uint64_t*, ThreadCounts&);

// Picks the loop instantiation for the options (once per replay, not per op). Threaded
// loops time each allocator call; the single-thread loop stays plain calls.
template <class P, bool kThreaded>
RunFn pickLoopFor(const EngineOptions& o) {
  if (o.verify) return &Loop<P, true, true, kThreaded>::run;
  if (o.writeObjects) return &Loop<P, true, false, kThreaded>::run;
  return &Loop<P, false, false, kThreaded>::run;
}
RunFn pickLoop(const EngineOptions& o, bool threaded) {
  if (!threaded) {
    if (o.allocator == EngineAllocator::None) return &Loop<NonePolicy, false, false, false>::run;
    return pickLoopFor<SystemPolicy, false>(o);
  }
  if (o.allocator == EngineAllocator::None) return &Loop<Timed<NonePolicy>, false, false, true>::run;
  return pickLoopFor<Timed<SystemPolicy>, true>(o);
}

// ---- trailer lookup ----

// Totals from a trace's trailer, found in the last bytes of the file (the trailer is a 16-byte
// chunk header with magic STTL and count 0, then 3 varints, CRC-checked). Empty when the
// trace has none; a wrong guess is impossible in practice and caught by the reader anyway.
std::optional<trace::TraceTotals> trailerFromTail(const unsigned char* tail, std::size_t n) {
  for (std::size_t start = 0; start + trace::kChunkHeaderSize + 3 <= n; ++start) {
    const unsigned char* h = tail + start;
    const std::size_t len = n - start - trace::kChunkHeaderSize;
    if (trace::getU32(h) != trace::kTrailerChunkMagic || trace::getU32(h + 4) != len ||
        trace::getU32(h + 8) != 0)
      continue;
    const unsigned char* p = h + trace::kChunkHeaderSize;
    if (trace::crc32(p, len) != trace::getU32(h + 12)) continue;
    trace::TraceTotals t;
    const unsigned char* end = p + len;
    if ((p = trace::getVarint(p, end, t.events)) && (p = trace::getVarint(p, end, t.objects)) &&
        (p = trace::getVarint(p, end, t.threads)) && p == end)
      return t;
  }
  return std::nullopt;
}

// Longest trailer: header plus three 10-byte varints.
constexpr std::size_t kMaxTrailerBytes = trace::kChunkHeaderSize + 30;


// ---- lifecycle threads: one OS thread per recorded thread, as the program had them ----

// Futex wait while *word == expected, and wake every waiter.
void futexWaitWord(std::uint32_t* word, std::uint32_t expected) noexcept {
  ::syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}
void futexWakeWord(std::uint32_t* word) noexcept {
  ::syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

struct Lifecycle;

// One recorded thread's OS thread.
struct alignas(64) ThreadSlot {
  std::uint32_t go = 0;    // futex word: the coordinator bumps it to run a window (or to stop)
  std::uint32_t seen = 0;  // the worker's: the last go value it acted on
  bool ending = false;     // the thread ends after this window's operations
  bool running = false;    // an OS thread is alive for the slot
  pthread_t handle{};
  Lifecycle* owner = nullptr;
  std::uint32_t index = 0;
};

// The coordinator (the engine's calling thread, which replays nothing itself) and the
// per-window sync: a countdown of the window's participants (the threads with events in it)
// that the last one to finish wakes, and a word per thread to start it. Participants change
// from window to window, so no fixed barrier.
struct Lifecycle {
  const PlanWindow* window = nullptr;
  RunFn run = nullptr;
  void** table = nullptr;
  const std::uint64_t* sizes = nullptr;
  ThreadCounts* counts = nullptr;  // by recorded thread
  ThreadSlot* slots = nullptr;     // by recorded thread
  std::uint32_t remaining = 0;     // futex word: participants still replaying the window
  bool stop = false;
  std::uint64_t live = 0, peakLive = 0, started = 0;

  static void* worker(void* arg) noexcept {
    ThreadSlot& s = *static_cast<ThreadSlot*>(arg);
    Lifecycle& x = *s.owner;
    for (;;) {
      std::uint32_t g;
      while ((g = __atomic_load_n(&s.go, __ATOMIC_ACQUIRE)) == s.seen) futexWaitWord(&s.go, s.seen);
      s.seen = g;
      if (__atomic_load_n(&x.stop, __ATOMIC_ACQUIRE)) return nullptr;
      const OwnVector<PlanOp>& ops = x.window->ops[s.index];
      x.run(ops.data(), ops.data() + ops.size(), x.table, x.sizes, x.counts[s.index]);
      collectAllocatorTime(x.counts[s.index]);
      const bool ending = s.ending;  // read before the countdown: the slot may be reused after
      if (__atomic_sub_fetch(&x.remaining, 1, __ATOMIC_ACQ_REL) == 0) futexWakeWord(&x.remaining);
      if (ending) return nullptr;  // the thread exits, as the program's did
    }
  }

  // Starts the OS thread of recorded thread t; false with error set when it cannot.
  bool start(std::uint32_t t, std::string& error) {
    ThreadSlot& s = slots[t];
    s.go = s.seen = 0;
    s.ending = false;
    s.owner = this;
    s.index = t;
    const int e = ::pthread_create(&s.handle, nullptr, &worker, &s);
    if (e != 0) {
      error = "cannot start a replay thread (" + std::to_string(live) + " alive): " + std::strerror(e);
      return false;
    }
    s.running = true;
    ++started;
    peakLive = std::max(peakLive, ++live);
    return true;
  }

  // Replays window w: its new threads start first, every thread with events in it replays its
  // operations, and the threads that end in it exit and are joined before this returns.
  bool runWindow(const PlanWindow& w, std::string& error) {
    for (const std::uint32_t t : w.started)
      if (!start(t, error)) return false;
    window = &w;
    for (const std::uint32_t t : w.ended) slots[t].ending = true;
    __atomic_store_n(&remaining, static_cast<std::uint32_t>(w.threads.size()), __ATOMIC_RELEASE);
    for (const std::uint32_t t : w.threads) {
      __atomic_add_fetch(&slots[t].go, 1, __ATOMIC_RELEASE);
      futexWakeWord(&slots[t].go);
    }
    std::uint32_t r;
    while ((r = __atomic_load_n(&remaining, __ATOMIC_ACQUIRE)) != 0) futexWaitWord(&remaining, r);
    for (const std::uint32_t t : w.ended) join(slots[t]);
    return true;
  }

  void join(ThreadSlot& s) noexcept {
    ::pthread_join(s.handle, nullptr);
    s.running = false;
    s.ending = false;
    --live;
  }

  // Ends every thread still alive (those that live to the end of the trace).
  void stopAll(std::size_t slotCount) noexcept {
    __atomic_store_n(&stop, true, __ATOMIC_RELEASE);
    for (std::size_t t = 0; t < slotCount; ++t)
      if (slots[t].running) {
        __atomic_add_fetch(&slots[t].go, 1, __ATOMIC_RELEASE);
        futexWakeWord(&slots[t].go);
      }
    for (std::size_t t = 0; t < slotCount; ++t)
      if (slots[t].running) join(slots[t]);
  }
};

double monotonicSeconds() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// ---- the replay ----

// Replays from a source. scan: the trace's totals, touches and thread lifecycle.
template <class Source>
ReplayResult replayWith(Source src, const TraceScan& scan, const EngineOptions& opt) {
  ReplayResult res;
  const trace::TraceTotals& totals = scan.totals;
  if (totals.objects > kMaxReplayObjects) {
    res.status = ReplayStatus::TraceError;
    res.detail = "the trace has " + std::to_string(totals.objects) + " objects, more than the " +
                 std::to_string(kMaxReplayObjects) + " replay supports";
    return res;
  }
  res.allocator = opt.allocator == EngineAllocator::None ? "none" : "glibc";
  res.recordedThreads = totals.threads;

  // Threads: as the program had them when the trace says when they started and ended and the
  // user forced no count; else a fixed pool (recorded thread t on replay thread t % threads).
  std::string note;
  bool lifecycle = false;
  if (opt.threads == 0 && scan.threadEvents) {
    if (scan.threadIndexTooLarge)
      note = "the trace names thread indexes of " + std::to_string(kMaxLifecycleThreadIndex) +
             " or more, beyond what replay gives a thread each; replayed on a pool instead";
    else if (scan.maxLiveThreads <= kMaxLifecycleThreads)
      lifecycle = true;
    else
      note = "the trace has " + std::to_string(scan.maxLiveThreads) +
             " threads alive at once, more than the " + std::to_string(kMaxLifecycleThreads) +
             " replay gives a thread each; replayed on a pool instead";
  }
  unsigned threads = opt.threads;
  if (threads == 0) threads = static_cast<unsigned>(std::min<std::uint64_t>(totals.threads, kMaxReplayThreads));
  if (threads == 0) threads = 1;
  if (threads > kMaxReplayThreads) threads = kMaxReplayThreads;
  const bool threaded = lifecycle || threads > 1;
  res.threadMode = lifecycle ? "lifecycle" : threads > 1 ? "pool" : "single";
  res.threads = lifecycle ? 0 : threads;  // lifecycle: the most alive at once, set at the end
  const std::uint64_t cores = std::max(1u, std::thread::hardware_concurrency());
  gSpinLimit = (lifecycle ? scan.maxLiveThreads : threads) <= cores ? 256 : 16;

  std::uint64_t window = opt.windowEvents;
  if (window == 0) window = std::clamp<std::uint64_t>(totals.events / 1000, 1024, 1u << 20);
  const std::uint64_t byteBudget = opt.heapLimit / 16;

  // Everything the replay keeps is in the replayer's own memory (own_memory.hpp), allocated
  // before the baseline.
  const std::uint64_t objects = std::max<std::uint64_t>(totals.objects, 1);
  const unsigned lists =
      lifecycle ? static_cast<unsigned>(std::max<std::uint64_t>(totals.threads, 1)) : threads;
  OwnVector<void*> table(objects, threaded ? kPending : nullptr);
  PlanDecoder<Source> decoder(std::move(src), totals.objects, lists,
                              scan.touches.empty() ? nullptr : &scan.touches, lifecycle);
  PlanWindow w;
  w.ops.resize(lists);
  if (!lifecycle)
    for (auto& v : w.ops) v.reserve(threaded ? window / threads + 1024 : window + 1024);
  OwnVector<ThreadCounts> counts(lists);
  OwnVector<ThreadSlot> slots(lifecycle ? lists : 0);
  const RunFn run = pickLoop(opt, threaded);
  const double overheadTicks = threaded ? clockOverheadTicks() : 0.0;

  auto finish = [&](ReplayStatus status, std::string detail) {
    res.status = status;
    res.detail = std::move(detail);
    const PlanCounts& pc = decoder.counts();
    res.events = pc.events;
    res.objects = pc.objects;
    res.peakLiveBytes = pc.peakLiveBytes;
    res.failedEvents = pc.failedEvents;
    for (const ThreadCounts& c : counts) {
      res.failedAllocations += c.failedAllocations;
      res.verifyErrors += c.verifyErrors;
    }
    auto addDetail = [&](const std::string& sentence) {
      res.detail = res.detail.empty() ? sentence : res.detail + "; " + sentence;
    };
    if (res.status == ReplayStatus::Ok && res.failedAllocations != 0)
      addDetail(std::to_string(res.failedAllocations) +
                " allocations returned null; later operations on those objects were skipped");
    if (res.status == ReplayStatus::Ok && res.verifyErrors != 0) {
      res.status = ReplayStatus::Error;
      res.detail = std::to_string(res.verifyErrors) +
                   " objects did not hold what was written into them (or were misaligned)";
    }
    if (!note.empty() && res.status == ReplayStatus::Ok) addDetail(note);
    res.fragmentationPercent =
        res.peakLiveBytes == 0 ? 0.0
                               : (static_cast<double>(res.peakHeapBytes) /
                                      static_cast<double>(res.peakLiveBytes) - 1.0) * 100.0;
    return res;
  };

  bool have = decoder.decodeWindow(w, window, byteBudget);
  if (decoder.failed()) return finish(ReplayStatus::TraceError, decoder.errorMessage());

  // Pool: worker threads 1..threads-1 and the calling thread as replay thread 0, a barrier
  // between windows.
  const bool pool = threaded && !lifecycle;
  std::barrier<> sync(static_cast<std::ptrdiff_t>(pool ? threads : 1));
  bool stop = false;
  std::vector<std::thread> workers;
  const std::uint64_t* sizes = decoder.sizes();
  void** tab = table.data();
  if (pool)
    for (unsigned t = 1; t < threads; ++t)
      workers.emplace_back([&, t] {
        for (;;) {
          sync.arrive_and_wait();
          if (stop) return;
          const auto& ops = w.ops[t];
          run(ops.data(), ops.data() + ops.size(), tab, decoder.sizes(), counts[t]);
          collectAllocatorTime(counts[t]);
          sync.arrive_and_wait();
        }
      });
  Lifecycle lc;
  lc.run = run;
  lc.table = tab;
  lc.sizes = sizes;
  lc.counts = counts.data();
  lc.slots = slots.data();

  // Heap = anonymous resident memory - the replayer's own mappings - the baseline (the
  // process without the allocator, measured by the caller; else the process as it is now).
  resetPeakRss();
  const std::uint64_t own0 = ownResidentBytes();
  const std::uint64_t anon0 = anonResidentBytes();
  const std::uint64_t baseline = opt.baselineBytes ? *opt.baselineBytes : (anon0 > own0 ? anon0 - own0 : 0);
  auto heapOf = [&](std::uint64_t anon, std::uint64_t own) {
    return anon > own + baseline ? anon - own - baseline : 0;
  };
  res.startupHeapBytes = heapOf(anon0, own0);
  res.peakHeapBytes = res.startupHeapBytes;
  if (opt.collectSeries) res.series.push_back(ReplaySample{0, 0, res.startupHeapBytes, 0});

  const std::uint64_t ticks0 = ticks();
  const double mono0 = monotonicSeconds();
  double wall = 0, cpu = 0;
  ReplayStatus status = ReplayStatus::Ok;
  std::string detail;
  while (have) {
    const double c0 = cpuNow();
    const auto t0 = std::chrono::steady_clock::now();
    if (lifecycle) {
      if (!lc.runWindow(w, detail)) {
        status = ReplayStatus::Error;
        break;
      }
    } else if (pool) {
      sync.arrive_and_wait();
      run(w.ops[0].data(), w.ops[0].data() + w.ops[0].size(), tab, sizes, counts[0]);
      collectAllocatorTime(counts[0]);
      sync.arrive_and_wait();
    } else {
      run(w.ops[0].data(), w.ops[0].data() + w.ops[0].size(), tab, sizes, counts[0]);
    }
    const auto t1 = std::chrono::steady_clock::now();
    cpu += cpuNow() - c0;
    wall += std::chrono::duration<double>(t1 - t0).count();

    const std::uint64_t heap = heapOf(anonResidentBytes(), ownResidentBytes());
    res.peakHeapBytes = std::max(res.peakHeapBytes, heap);
    if (opt.collectSeries) res.series.push_back(ReplaySample{wall, w.endEvent, heap, w.liveBytesAtEnd});
    if (opt.heapLimit != 0 && heap > opt.heapLimit) {
      status = ReplayStatus::HeapLimit;
      detail = "the heap reached " + std::to_string(heap) + " bytes, over the limit of " +
               std::to_string(opt.heapLimit) + ", after " + std::to_string(w.endEvent) + " events";
      break;
    }
    have = decoder.decodeWindow(w, window, byteBudget);
  }
  const std::uint64_t ticks1 = ticks();
  const double mono1 = monotonicSeconds();
  if (pool) {
    stop = true;
    sync.arrive_and_wait();
    for (std::thread& t : workers) t.join();
  }
  if (lifecycle) {
    lc.stopAll(slots.size());
    res.threads = lc.peakLive;
    res.threadsStarted = lc.started;
  } else {
    res.threadsStarted = threads;
  }

  res.wallSeconds = wall;
  res.cpuSeconds = cpu;
  if (threaded && mono1 > mono0 && ticks1 > ticks0) {
    // Ticks to seconds at the rate the clock ran over the replay; the clock's own cost comes
    // off every timed call.
    const double rate = static_cast<double>(ticks1 - ticks0) / (mono1 - mono0);
    double t = 0, calls = 0;
    for (const ThreadCounts& c : counts) {
      t += static_cast<double>(c.allocTicks);
      calls += static_cast<double>(c.allocCalls);
    }
    res.allocatorSeconds = std::max(0.0, t - calls * overheadTicks) / rate;
  }
  if (status == ReplayStatus::Ok) {
    // The peak-RSS mark catches a peak between two samples; by the same definition: minus
    // file-backed pages, the replayer's own mappings and the baseline.
    const std::uint64_t hwm = statusField("VmHWM:");
    const std::uint64_t notHeap = fileResidentBytes() + ownResidentBytes() + baseline;
    if (hwm > notHeap) res.peakHeapBytes = std::max(res.peakHeapBytes, hwm - notHeap);
  }
  // After the measurements: free what the trace left live, so an in-process replay (tests,
  // bench/replay_harness) does not leak. Objects of a window that was never replayed (the
  // trace broke in it) have no pointer yet and are skipped.
  OwnVector<PlanOp> leftovers;
  decoder.freeLiveObjects(leftovers);
  std::erase_if(leftovers, [&](const PlanOp& op) { return notReady(table[op.object]); });
  ThreadCounts ignored;
  const PlanOp* first = leftovers.data();
  const PlanOp* last = first + leftovers.size();
  if (opt.allocator == EngineAllocator::None)
    Loop<NonePolicy, false, false, false>::run(first, last, tab, sizes, ignored);
  else
    Loop<SystemPolicy, false, false, false>::run(first, last, tab, sizes, ignored);
  if (decoder.failed()) return finish(ReplayStatus::TraceError, decoder.errorMessage());
  return finish(status, detail);
}

// The scan a replay needs: a version 1 trace with a trailer needs none (no touches, no
// thread events; the trailer has the totals); any other is read once ahead (scan.hpp).
template <class Source>
TraceScan scanIfNeeded(Source src, std::uint16_t version, const std::optional<trace::TraceTotals>& trailer) {
  if (version == 1 && trailer) {
    TraceScan scan;
    scan.totals = *trailer;
    return scan;
  }
  return scanTrace(std::move(src));
}

// The format version from a trace's first bytes (0 when too short: the reader will say why).
std::uint16_t headerVersion(const unsigned char* data, std::size_t n) noexcept {
  return n >= trace::kFileHeaderSize ? trace::getU16(data + 8) : 0;
}

}  // namespace

ReplayResult replayFile(const std::string& path, const EngineOptions& options) {
  auto fail = [](std::string detail) {
    ReplayResult r;
    r.status = ReplayStatus::TraceError;
    r.detail = std::move(detail);
    return r;
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  std::optional<trace::TraceTotals> totals;
  std::uint16_t version = 0;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    unsigned char tail[kMaxTrailerBytes];
    const auto fileSize = static_cast<std::uint64_t>(st.st_size);
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(fileSize, sizeof tail));
    if (n > 0 && ::pread(fd, tail, n, static_cast<off_t>(fileSize - n)) == static_cast<ssize_t>(n))
      totals = trailerFromTail(tail, n);
    unsigned char head[trace::kFileHeaderSize];
    if (::pread(fd, head, sizeof head, 0) == static_cast<ssize_t>(sizeof head))
      version = headerVersion(head, sizeof head);
  }
  const TraceScan scan = scanIfNeeded(trace::FdSource{fd}, version, totals);
  if (!scan.error.empty()) {
    ::close(fd);
    return fail(scan.error);
  }
  if (::lseek(fd, 0, SEEK_SET) != 0) {
    ::close(fd);
    return fail("cannot read the trace twice (not a regular file?)");
  }
  ReplayResult r = replayWith(trace::FdSource{fd}, scan, options);
  ::close(fd);
  return r;
}

ReplayResult replayMemory(const unsigned char* data, std::size_t size, const EngineOptions& options) {
  const std::size_t n = std::min(size, kMaxTrailerBytes);
  const std::optional<trace::TraceTotals> totals = trailerFromTail(data + size - n, n);
  const TraceScan scan =
      scanIfNeeded(trace::MemorySource{data, size}, headerVersion(data, size), totals);
  if (!scan.error.empty()) {
    ReplayResult r;
    r.status = ReplayStatus::TraceError;
    r.detail = scan.error;
    return r;
  }
  return replayWith(trace::MemorySource{data, size}, scan, options);
}

}  // namespace strata::replay
