// The replay loop (engine.cpp's inner loop) and what it needs beside the allocator calls
// (allocator_calls.hpp): the object table's "not created yet" sentinels and the futex wait for
// an object another thread creates, and the --verify pattern. Included by engine.cpp only.
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

#include "replay/allocator_calls.hpp"
#include "replay/engine.hpp"
#include "replay/plan.hpp"

namespace strata::replay::detail {

// Object table value meaning "no object in the slot yet" (never a real pointer: misaligned
// and in the last page). Every slot holds it until its object is created, and again once the
// object is freed, ready for the slot's next object (plan.hpp).
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
          const std::size_t align = alignOf(w);
          created(checkAligned(P::memalign(align, size), align, c), id, size, touched, table, c);
          break;
        }
        case OpKind::New:
          created(P::opNew(size), id, size, touched, table, c);
          break;
        case OpKind::NewAligned: {
          const std::size_t align = alignOf(w);
          created(checkAligned(P::opNewAligned(size, align), align, c), id, size, touched, table, c);
          break;
        }
        case OpKind::Realloc:
          reallocated(op->other, id, size, touched, table, sizes, c);
          break;
        case OpKind::Free:
          if (void* p = toFree(table, sizes, id, c)) P::free(p);
          break;
        case OpKind::Delete:
          if (void* p = toFree(table, sizes, id, c)) P::opDelete(p);
          break;
        case OpKind::DeleteAligned:
          if (void* p = toFree(table, sizes, id, c)) P::opDeleteAligned(p, alignOf(w));
          break;
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

  // Empties the slot of an object freed (or moved by realloc), for the slot's next object. A
  // plain store in threaded replay too: no other thread names the slot again in this window
  // (plan.hpp), and the barrier between windows publishes it.
  [[gnu::always_inline]] static void vacate(void** table, std::uint32_t id) noexcept {
    if constexpr (kThreaded) __atomic_store_n(&table[id], kPending, __ATOMIC_RELAXED);
    else table[id] = kPending;
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

  // The helpers of run's cases are always inlined: the loop must stay one switch over direct
  // calls (docs/toolkit/replay.md, "The harness's own cost").

  // The alignment of an aligned operation (memalign, aligned new and delete).
  [[gnu::always_inline]] static std::size_t alignOf(std::uint64_t word) noexcept {
    return std::size_t{1} << ((word >> 8) & 0xff);
  }

  // p from an aligned allocation; --verify counts it when it is misaligned.
  [[gnu::always_inline]] static void* checkAligned(void* p, std::size_t align, ThreadCounts& c) noexcept {
    if constexpr (kVerify)
      if (p != nullptr && (reinterpret_cast<std::uintptr_t>(p) & (align - 1)) != 0) ++c.verifyErrors;
    return p;
  }

  // The pointer of an object to free, its slot emptied; nullptr when its allocation failed
  // (nothing to free). --verify checks that it still holds what was written into it.
  [[gnu::always_inline]] static void* toFree(void** table, const std::uint64_t* sizes,
                                             std::uint32_t id, ThreadCounts& c) noexcept {
    void* p = lookup(table, id);
    if constexpr (kVerify)
      if (p != nullptr && !checkPattern(p, id, sizes[id])) ++c.verifyErrors;
    vacate(table, id);
    return p;
  }

  // realloc of object oldId into object id; writes the part of [old size, touched bytes)
  // beyond the old size (--verify: checks the old bytes, writes the new pattern). A realloc
  // that fails frees the old object, so the table never holds it twice.
  [[gnu::always_inline]] static void reallocated(std::uint32_t oldId, std::uint32_t id,
                                                 std::uint64_t size, std::uint64_t& touched,
                                                 void** table, const std::uint64_t* sizes,
                                                 ThreadCounts& c) noexcept {
    void* old = lookup(table, oldId);
    vacate(table, oldId);
    if (old == nullptr) {
      publish(table, id, nullptr);
      touched = kWholeObject;
      return;
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
      return;
    }
    if constexpr (kVerify) {
      if (!checkPattern(p, oldId, std::min(oldSize, size))) ++c.verifyErrors;
      fillPattern(p, id, size);
    } else if constexpr (kWrite) {
      const std::uint64_t upTo = std::min(size, touched);
      if (upTo > oldSize) std::memset(static_cast<char*>(p) + oldSize, kFillByte, upTo - oldSize);
    }
    touched = kWholeObject;
    publish(table, id, p);
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
