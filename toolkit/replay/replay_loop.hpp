// The replay loop (engine.cpp's inner loop) and what it calls: the allocator policies (the
// process's malloc, the do-nothing allocator, either timed per call), the object table's
// "not created yet" sentinels and the futex wait for an object another thread creates, the
// --verify pattern, and the per-thread counts. Included by engine.cpp only.
#pragma once
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <new>

#include "engine.hpp"
#include "plan.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace strata::replay::detail {

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
alignas(4096) inline unsigned char gNoneBlock[64];
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
inline thread_local std::uint64_t tAllocTicks = 0;
inline thread_local std::uint64_t tAllocCalls = 0;

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
inline double clockOverheadTicks() noexcept {
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
inline void* const kPending = reinterpret_cast<void*>(~std::uintptr_t{0});
inline constexpr unsigned char kFillByte = 0xA5;

// A slot some thread sleeps on, waiting for its creator (threaded replay only).
inline void* const kWaited = reinterpret_cast<void*>(~std::uintptr_t{0} - 1);

// Whether a slot value is one of the two "not created yet" sentinels.
inline bool notReady(void* p) noexcept {
  return reinterpret_cast<std::uintptr_t>(p) >= reinterpret_cast<std::uintptr_t>(kWaited);
}

// The low 32 bits of an object-table slot, the word a waiting thread sleeps on (x86-64 and
// every little-endian target: the low half comes first; a real pointer's low half is never
// kWaited's, 0xfffffffe, which is not 8-byte aligned).
inline int* slotWord(void** slot) noexcept { return reinterpret_cast<int*>(slot); }

// Sleeps while the slot still holds kWaited (at most 10 ms a call).
inline void futexWait(void** slot) noexcept {
  const timespec timeout{0, 10'000'000};
  ::syscall(SYS_futex, slotWord(slot), FUTEX_WAIT_PRIVATE, static_cast<int>(0xfffffffeu), &timeout,
            nullptr, 0);
}

// Wakes every thread sleeping on the slot.
inline void futexWake(void** slot) noexcept {
  ::syscall(SYS_futex, slotWord(slot), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

// How long a threaded replay spins on an object not yet published before it sleeps:
// long when every replay thread has a core (the creator is running and will publish soon),
// short when there are more replay threads than cores (the creator may need this core).
// Set once per replay, before any replay thread starts.
inline unsigned gSpinLimit = 256;

// What one replay thread counted; padded so threads do not share a cache line.
struct alignas(64) ThreadCounts {
  std::uint64_t failedAllocations = 0;
  std::uint64_t verifyErrors = 0;
  std::uint64_t allocTicks = 0;  // timed replays: ticks inside allocator calls
  std::uint64_t allocCalls = 0;  // and the number of calls timed
};

// Moves this thread's allocator time into c (after each window it replays).
inline void collectAllocatorTime(ThreadCounts& c) noexcept {
  c.allocTicks += tAllocTicks;
  c.allocCalls += tAllocCalls;
  tAllocTicks = tAllocCalls = 0;
}

// The --verify pattern: byte i of object id is (h(id) + i) mod 256, so two overlapping
// objects, or an object moved to the wrong offset, differ somewhere.
inline unsigned char patternBase(std::uint32_t id) noexcept {
  return static_cast<unsigned char>((id * 2654435761u) >> 24);
}
inline void fillPattern(void* p, std::uint32_t id, std::uint64_t n) noexcept {
  auto* b = static_cast<unsigned char*>(p);
  const unsigned char h = patternBase(id);
  for (std::uint64_t i = 0; i < n; ++i) b[i] = static_cast<unsigned char>(h + i);
}
inline bool checkPattern(const void* p, std::uint32_t id, std::uint64_t n) noexcept {
  const auto* b = static_cast<const unsigned char*>(p);
  const unsigned char h = patternBase(id);
  for (std::uint64_t i = 0; i < n; ++i)
    if (b[i] != static_cast<unsigned char>(h + i)) return false;
  return true;
}
inline bool allZero(const void* p, std::uint64_t n) noexcept {
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
inline RunFn pickLoopFor(const EngineOptions& o) {
  if (o.verify) return &Loop<P, true, true, kThreaded>::run;
  if (o.writeObjects) return &Loop<P, true, false, kThreaded>::run;
  return &Loop<P, false, false, kThreaded>::run;
}
inline RunFn pickLoop(const EngineOptions& o, bool threaded) {
  if (!threaded) {
    if (o.allocator == EngineAllocator::None) return &Loop<NonePolicy, false, false, false>::run;
    return pickLoopFor<SystemPolicy, false>(o);
  }
  if (o.allocator == EngineAllocator::None) return &Loop<Timed<NonePolicy>, false, false, true>::run;
  return pickLoopFor<Timed<SystemPolicy>, true>(o);
}

}  // namespace strata::replay::detail
