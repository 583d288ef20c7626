// The recorder's per-thread event rings and their merge (toolkit/record/recorder/rings.hpp) on their own,
// with a counter for a clock: the merge hands on events in time-stamp order across rings,
// only those stamped at or below its bound, each exactly once; a full ring has room again
// after a merge; concurrent producers with a merging thread lose and repeat nothing and keep
// each ring's order; and an address released by one thread and then created by another
// (the handover the recorder's correctness rests on) is always merged release first.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "record/recorder/rings.hpp"
#include "strata/detail/spin_lock.hpp"

namespace {

using strata::record::kRingEvents;
using strata::record::RawEvent;
using strata::record::Ring;
using strata::record::RingSet;

struct Seen {
  std::uint32_t thread;
  RawEvent event;
};

// The merge's consumer: collects what it is handed, in order.
struct Collect {
  std::vector<Seen> seen;
  std::size_t prefetches = 0;
  void prefetch(std::uint64_t) { ++prefetches; }
  void operator()(std::uint32_t thread, const RawEvent& e) { seen.push_back({thread, e}); }
};

RawEvent event(std::uint64_t tsc, std::uint64_t addr, std::uint8_t op = 0) {
  return RawEvent{tsc, addr, 0, op, 0, 0};
}

TEST(RecordRings, MergeIsInTimeStampOrderAcrossRings) {
  RingSet set;
  Ring* a = set.acquire(0);
  Ring* b = set.acquire(1);
  Ring* c = set.acquire(2);
  ASSERT_TRUE(a && b && c);
  for (std::uint64_t t : {1, 4, 7, 10}) a->push(event(t, t));
  for (std::uint64_t t : {2, 3, 8}) b->push(event(t, t));
  for (std::uint64_t t : {5, 6, 9, 11}) c->push(event(t, t));
  Collect out;
  set.merge(~std::uint64_t{0}, out);
  ASSERT_EQ(out.seen.size(), 11u);
  for (std::size_t i = 0; i < out.seen.size(); ++i) EXPECT_EQ(out.seen[i].event.tsc, i + 1);
  EXPECT_EQ(out.seen[0].thread, 0u);
  EXPECT_EQ(out.seen[1].thread, 1u);
  EXPECT_EQ(out.seen[4].thread, 2u);
  EXPECT_GT(out.prefetches, 0u);
  EXPECT_TRUE(a->drained() && b->drained() && c->drained());
  Collect again;
  set.merge(~std::uint64_t{0}, again);
  EXPECT_TRUE(again.seen.empty()) << "a merged event was handed on twice";
}

TEST(RecordRings, EventsAboveTheBoundWaitForTheNextMerge) {
  RingSet set;
  Ring* a = set.acquire(0);
  Ring* b = set.acquire(1);
  for (std::uint64_t t : {10, 20, 30}) a->push(event(t, t));
  for (std::uint64_t t : {15, 25}) b->push(event(t, t));
  Collect first;
  set.merge(20, first);
  ASSERT_EQ(first.seen.size(), 3u);
  EXPECT_EQ(first.seen[2].event.tsc, 20u);
  EXPECT_FALSE(a->drained());
  Collect second;
  set.merge(~std::uint64_t{0}, second);
  ASSERT_EQ(second.seen.size(), 2u);
  EXPECT_EQ(second.seen[0].event.tsc, 25u);
  EXPECT_EQ(second.seen[1].event.tsc, 30u);
}

TEST(RecordRings, FullRingHasRoomAfterAMergeAndRingsAreReused) {
  RingSet set;
  Ring* r = set.acquire(3);
  for (std::uint64_t i = 0; i < kRingEvents; ++i) {
    ASSERT_TRUE(r->hasRoom()) << i;
    r->push(event(i, i));
  }
  EXPECT_FALSE(r->hasRoom());
  EXPECT_EQ(r->backlog(), kRingEvents);
  Collect out;
  set.merge(~std::uint64_t{0}, out);
  EXPECT_EQ(out.seen.size(), kRingEvents);
  EXPECT_TRUE(r->hasRoom());
  EXPECT_EQ(r->backlog(), 0u);
  r->push(event(1000, 1));
  set.release(r);  // its unmerged event is dropped
  Ring* again = set.acquire(4);
  EXPECT_EQ(again, r);
  EXPECT_EQ(again->thread, 4u);
  EXPECT_TRUE(again->drained());
  EXPECT_NE(set.acquire(5), r);
}

TEST(RecordRings, ResetAfterForkKeepsOnlyTheForkingThreadsRing) {
  RingSet set;
  Ring* mine = set.acquire(0);
  Ring* other = set.acquire(1);
  mine->push(event(1, 1));
  other->push(event(2, 2));
  set.resetAfterFork(mine);
  EXPECT_TRUE(mine->inUse);
  EXPECT_FALSE(other->inUse);
  Collect out;
  set.merge(~std::uint64_t{0}, out);
  EXPECT_TRUE(out.seen.empty());
  EXPECT_EQ(set.acquire(2), other);
}

// The clock: a counter, each stamp a fetch_add; a merge's bound is the last stamp handed out
// before it began (the real recorder reads the TSC, strictly later than any stamp before).

// Producers pushing flat out (waiting when their ring is full) while a thread merges under a
// lock: every event is handed on exactly once, each ring's in push order, each merge in
// time-stamp order and at or below its bound.
TEST(RecordRings, ConcurrentProducersAndMergerEveryEventExactlyOnce) {
  constexpr unsigned kProducers = 4;
  constexpr std::uint64_t kEach = 50000;
  RingSet set;
  std::mutex lock;  // the recorder's lock, for the set and the merge
  std::atomic<std::uint64_t> clock{1};
  std::atomic<unsigned> running{kProducers};
  std::vector<Seen> all;
  std::atomic<int> disorder{0};

  auto mergeOnce = [&](std::uint64_t bound) {
    Collect out;
    set.merge(bound, out);
    for (std::size_t i = 0; i < out.seen.size(); ++i) {
      if (out.seen[i].event.tsc > bound) ++disorder;
      if (i > 0 && out.seen[i].event.tsc < out.seen[i - 1].event.tsc) ++disorder;
    }
    all.insert(all.end(), out.seen.begin(), out.seen.end());
  };
  auto producer = [&](std::uint32_t id) {
    Ring* r;
    {
      std::lock_guard<std::mutex> g(lock);
      r = set.acquire(id);
    }
    for (std::uint64_t i = 0; i < kEach; ++i) {
      while (!r->hasRoom()) std::this_thread::yield();
      r->push(event(clock.fetch_add(1), (std::uint64_t{id} << 32) | i));
    }
    running.fetch_sub(1);
  };
  std::vector<std::thread> threads;
  for (std::uint32_t p = 0; p < kProducers; ++p) threads.emplace_back(producer, p);
  while (running.load() != 0) {
    std::lock_guard<std::mutex> g(lock);
    mergeOnce(clock.load() - 1);  // the last stamp handed out
  }
  for (auto& t : threads) t.join();
  {
    std::lock_guard<std::mutex> g(lock);
    mergeOnce(~std::uint64_t{0});
  }
  EXPECT_EQ(disorder.load(), 0);
  ASSERT_EQ(all.size(), kProducers * kEach);
  std::vector<std::uint64_t> next(kProducers, 0);
  for (const Seen& s : all) {
    const auto id = static_cast<std::uint32_t>(s.event.addr >> 32);
    const std::uint64_t seq = s.event.addr & 0xffffffffu;
    ASSERT_LT(id, kProducers);
    ASSERT_EQ(s.thread, id);
    ASSERT_EQ(seq, next[id]) << "producer " << id << ": an event lost, repeated or reordered";
    ++next[id];
  }
}

// The handover: thread A publishes the release of an address and then lets thread B have it;
// B stamps its create of that address afterwards. Whatever merge hands on B's create must
// have handed on A's release before it, in the same merge or an earlier one.
TEST(RecordRings, HandedOverAddressIsReleasedBeforeItIsCreated) {
  constexpr std::uint64_t kAddresses = 20000;
  constexpr std::uint8_t kRelease = 1, kCreate = 2;
  RingSet set;
  std::mutex lock;
  std::atomic<std::uint64_t> clock{1};
  std::atomic<std::uint64_t> handedOver{0};  // addresses 1..handedOver are B's
  std::atomic<bool> done{false};
  std::vector<Seen> all;

  Ring* ra;
  Ring* rb;
  {
    std::lock_guard<std::mutex> g(lock);
    rb = set.acquire(1);
    ra = set.acquire(0);  // the set's list starts with the last ring: A's head is read first
  }
  std::thread a([&] {
    for (std::uint64_t addr = 1; addr <= kAddresses; ++addr) {
      while (!ra->hasRoom()) std::this_thread::yield();
      ra->push(event(clock.fetch_add(1), addr, kRelease));
      handedOver.store(addr, std::memory_order_release);
    }
  });
  std::thread b([&] {
    for (std::uint64_t addr = 1; addr <= kAddresses; ++addr) {
      while (handedOver.load(std::memory_order_acquire) < addr) std::this_thread::yield();
      while (!rb->hasRoom()) std::this_thread::yield();
      rb->push(event(clock.fetch_add(1), addr, kCreate));
    }
    done.store(true);
  });
  // A merge slow between reading A's head and B's (its prefetches spin), so that B's create
  // is often published in between: only the bound keeps it out of that merge.
  struct SlowCollect : Collect {
    void prefetch(std::uint64_t) {
      for (int i = 0; i < 200; ++i) strata::detail::cpu_relax();
    }
  };
  while (!done.load()) {
    std::lock_guard<std::mutex> g(lock);
    SlowCollect out;
    set.merge(clock.load() - 1, out);
    all.insert(all.end(), out.seen.begin(), out.seen.end());
  }
  a.join();
  b.join();
  Collect rest;
  set.merge(~std::uint64_t{0}, rest);
  all.insert(all.end(), rest.seen.begin(), rest.seen.end());

  ASSERT_EQ(all.size(), 2 * kAddresses);
  std::vector<std::uint8_t> state(kAddresses + 1, 0);  // 0, then released, then created
  for (const Seen& s : all) {
    const std::uint64_t addr = s.event.addr;
    if (s.event.op == kRelease) {
      ASSERT_EQ(state[addr], 0) << addr;
      state[addr] = kRelease;
    } else {
      ASSERT_EQ(state[addr], kRelease) << "address " << addr << " created before its release";
      state[addr] = kCreate;
    }
  }
}

}  // namespace
