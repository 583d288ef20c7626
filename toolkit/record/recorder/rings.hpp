// Per-thread event rings and their merge. With the tsc clock, in a multi-threaded process,
// the plain create and release calls do not take the recorder's lock: each thread appends a
// raw event to a ring of its own, and whoever holds the lock merges the rings' published
// events into the address map and the writer, in time-stamp order. The lock, the map and the
// writer then move between cores once per batch of events instead of once per event
// (thread_ring.hpp is the calling thread's side, events.cpp applies the merged events).
//
// Why time-stamp order gives a correct trace: an address can only be reused after it was
// freed. A release is stamped and published BEFORE the real free; a create is stamped AFTER
// the real malloc returned. So when thread B's malloc returns the address thread A freed, A's
// free was published before B's malloc stamped its event, and has the smaller stamp (the TSC
// is synchronised across CPUs: tscUsable(), and stampTsc() orders the read with the code
// around it). A merge writes only events stamped before it started (mergeBound()), all of
// whose predecessors of this kind are therefore already published; so a merge never sees
// B's malloc without A's free, and writes the free first.
//
// The merge's promise, which tests/toolkit/record/rings_test.cpp checks under concurrent producers:
// every published event is handed on exactly once; one merge hands on only events stamped at
// or below its bound, in time-stamp order across the rings (a ring's own events in the order
// they were pushed); events published after the merge looked at a ring, or stamped above the
// bound, stay for the next merge.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <atomic>

#include "record/recorder/clock.hpp"

namespace strata::record {

// One raw event as a thread logs it: op, flags, alignment, TSC stamp, address and size (the
// meaning of each is the events unit's business).
struct RawEvent {
  uint64_t tsc;
  uint64_t addr;
  uint64_t size;
  uint8_t op;
  uint8_t flags;
  uint8_t align;
};
// Events per ring: 2048 x 32 bytes (the merge's batch: its cache misses in the address map
// overlap, prefetched ahead). A thread whose ring is full merges every ring.
inline constexpr uint64_t kRingEvents = 2048;

// A single-producer ring: the owning thread writes events and publishes them with a release
// store of head; the merger (under the recorder's lock) reads them after an acquire load of
// head and hands the slots back with a release store of tail. mmap memory, in a RingSet.
struct Ring {
  alignas(64) std::atomic<uint64_t> head{0};
  uint64_t cachedTail = 0;  // the producer's last look at tail
  alignas(64) std::atomic<uint64_t> tail{0};
  Ring* next = nullptr;  // the RingSet's list
  uint32_t thread = 0;   // the owner's dense thread index
  bool inUse = false;    // owned by a live thread
  alignas(64) RawEvent events[kRingEvents];

  // Producer: whether the next push has room, looking at tail again only when the last look
  // said full.
  bool hasRoom() {
    const uint64_t h = head.load(std::memory_order_relaxed);
    if (h - cachedTail < kRingEvents) [[likely]] return true;
    cachedTail = tail.load(std::memory_order_acquire);
    return h - cachedTail < kRingEvents;
  }
  // Producer: the events not yet handed back by the merger, after a fresh look at tail.
  uint64_t backlog() {
    cachedTail = tail.load(std::memory_order_acquire);
    return head.load(std::memory_order_relaxed) - cachedTail;
  }
  // Producer: writes e into the next slot and publishes it; hasRoom() must have said yes.
  void push(const RawEvent& e) {
    const uint64_t h = head.load(std::memory_order_relaxed);
    events[h % kRingEvents] = e;
    head.store(h + 1, std::memory_order_release);
  }
  // Whether every published event has been handed back.
  bool drained() const {
    return tail.load(std::memory_order_relaxed) == head.load(std::memory_order_relaxed);
  }
  // Drops the unmerged events (the merger's side, or the owner's when nobody merges).
  void dropAll() { tail.store(head.load(std::memory_order_relaxed), std::memory_order_relaxed); }
};

// The bound for a merge: the TSC read after everything before and before the loads of the
// heads in merge() (LFENCE on both sides), so every event published before those loads began
// (and so every release that a create stamped before the bound depends on) is seen.
inline uint64_t mergeBound() {
  const uint64_t bound = stampTsc(true);
#if defined(__x86_64__)
  _mm_lfence();
#endif
  return bound;
}

// Every ring of the process, and the merge's scratch array (one cursor per ring). Not
// thread-safe: used under the recorder's lock (producers touch only their own ring's head
// and cachedTail, and read its tail).
class RingSet {
 public:
  // A ring for thread `thread`: one an exited thread gave back, or a new one. nullptr when
  // out of memory.
  Ring* acquire(uint32_t thread) noexcept;
  // Gives r back for another thread, dropping what it has not merged (callers drain first).
  void release(Ring* r) noexcept;
  // Whether any ring exists (none: nothing to merge).
  bool any() const { return first_ != nullptr; }
  // In a fork child: every ring emptied; only `keep` (the forking thread's, or null) stays in
  // use, the others belong to threads the child does not have.
  void resetAfterFork(const Ring* keep) noexcept;

  // Hands every ring's published events stamped at or below bound to
  // apply(thread, const RawEvent&), in time-stamp order (a k-way merge over the rings), and
  // hands their slots back. apply.prefetch(addr) is called for the addresses of events a few
  // ahead, so that the cache misses of apply's lookups overlap.
  template <class Apply>
  void merge(uint64_t bound, Apply& apply);

 private:
  struct Cursor {
    Ring* ring;
    uint64_t pos, end;
  };
  // How many events ahead of the merge apply.prefetch runs.
  static constexpr uint64_t kPrefetchAhead = 8;
  bool growCursors() noexcept;

  Ring* first_ = nullptr;
  size_t count_ = 0;
  Cursor* cursors_ = nullptr;
  size_t cursorCap_ = 0;
};

template <class Apply>
void RingSet::merge(uint64_t bound, Apply& apply) {
  size_t n = 0;
  for (Ring* r = first_; r != nullptr; r = r->next) {
    const uint64_t end = r->head.load(std::memory_order_acquire);
    const uint64_t pos = r->tail.load(std::memory_order_relaxed);
    if (end == pos || n == cursorCap_) continue;
    cursors_[n++] = Cursor{r, pos, end};
    for (uint64_t i = pos; i < end && i < pos + kPrefetchAhead; ++i)
      apply.prefetch(r->events[i % kRingEvents].addr);
  }
  if (n == 1) {  // one ring with events (a single-threaded program): its order is the order
    Cursor& c = cursors_[0];
    for (; c.pos != c.end; ++c.pos) {
      const RawEvent& e = c.ring->events[c.pos % kRingEvents];
      if (e.tsc > bound) break;
      if (c.pos + kPrefetchAhead < c.end)
        apply.prefetch(c.ring->events[(c.pos + kPrefetchAhead) % kRingEvents].addr);
      apply(c.ring->thread, e);
    }
    c.ring->tail.store(c.pos, std::memory_order_release);
    return;
  }
  while (n != 0) {
    size_t best = 0;
    uint64_t bestTsc = cursors_[0].ring->events[cursors_[0].pos % kRingEvents].tsc;
    for (size_t i = 1; i < n; ++i) {
      const uint64_t t = cursors_[i].ring->events[cursors_[i].pos % kRingEvents].tsc;
      if (t < bestTsc) {
        bestTsc = t;
        best = i;
      }
    }
    if (bestTsc > bound) break;
    Cursor& c = cursors_[best];
    const RawEvent& e = c.ring->events[c.pos % kRingEvents];
    if (c.pos + kPrefetchAhead < c.end)
      apply.prefetch(c.ring->events[(c.pos + kPrefetchAhead) % kRingEvents].addr);
    apply(c.ring->thread, e);
    if (++c.pos == c.end) {
      c.ring->tail.store(c.pos, std::memory_order_release);
      c = cursors_[--n];
    }
  }
  for (size_t i = 0; i < n; ++i)
    cursors_[i].ring->tail.store(cursors_[i].pos, std::memory_order_release);
}

}  // namespace strata::record
