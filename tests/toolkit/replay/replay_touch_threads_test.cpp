// Replay of what format version 2 traces carry and of what the replay measures about itself:
// touch-aware writes, threads started and ended as recorded (lifecycle mode), allocator time
// without waiting, the replayer's own tables kept out of the heap, version 1 traces, and the
// new result fields through the result file and JSON.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "replay/engine.hpp"
#include "replay/measure.hpp"
#include "replay/own_memory.hpp"
#include "replay/plan.hpp"
#include "replay/result_file.hpp"
#include "trace_builder.hpp"

namespace {

using namespace strata;
using namespace strata::replay;
using strata::test::Bytes;
using strata::test::TraceBuilder;
using trace::Op;

constexpr std::uint64_t kPage = 4096;
constexpr std::uint64_t kBig = std::uint64_t{64} << 20;

EngineOptions oneThread() {
  EngineOptions o;
  o.threads = 1;
  return o;
}

#ifdef STRATA_TEST_GLIBC_MALLOC
// A 64 MiB calloc the program touched one page of replays as one page, not 64 MiB; without
// the Touch it is written whole.
TEST(ReplayTouch, LargeCallocTouchedOnOnePageStaysSmall) {
  for (const bool touched : {true, false}) {
    TraceBuilder b;
    const auto id = b.add(Op::Calloc, kBig);
    if (touched) b.touch(id, kPage);
    b.free(id);
    const Bytes t = b.finish();
    const ReplayResult r = replayMemory(t.data(), t.size(), oneThread());
    ASSERT_EQ(r.status, ReplayStatus::Ok) << r.detail;
    if (touched) EXPECT_LE(r.peakHeapBytes, 8 * kPage) << "touched one page";
    else EXPECT_GE(r.peakHeapBytes, kBig / 10 * 9) << "written whole";
  }
}

// realloc writes only the part of [old size, touched) beyond the old size; malloc, memalign
// and new write only their touched bytes. Each object here is touched on two pages.
TEST(ReplayTouch, EveryCreatingCallWritesOnlyTheTouchedBytes) {
  TraceBuilder b;
  const auto small = b.malloc(kPage);
  const auto grown = b.add(Op::Realloc, kBig, small);
  const auto m = b.malloc(kBig);
  const auto a = b.add(Op::Memalign, kBig, trace::kNoObject, trace::kNoObject, trace::kFlagAligned, 0, 12);
  const auto n = b.add(Op::New, kBig);
  for (const auto id : {grown, m, a}) {
    b.touch(id, 2 * kPage);
    b.free(id);
  }
  b.touch(n, 2 * kPage);
  b.add(Op::Delete, 0, trace::kNoObject, n);
  const Bytes t = b.finish();
  const ReplayResult r = replayMemory(t.data(), t.size(), oneThread());
  ASSERT_EQ(r.status, ReplayStatus::Ok) << r.detail;
  EXPECT_EQ(r.peakLiveBytes, 4 * kBig);
  EXPECT_LE(r.peakHeapBytes, 32 * kPage);  // 4 objects of 2 pages, and a little noise
  // Decoded, the Touch comes just before the operation creating its object.
  const TraceScan scan = scanTrace(trace::MemorySource{t.data(), t.size()});
  ASSERT_EQ(scan.touches.size(), 4u);
  PlanDecoder<trace::MemorySource> d(trace::MemorySource{t.data(), t.size()}, 1,
                                     &scan.touches);
  PlanWindow w;
  ASSERT_TRUE(d.decodeWindow(w, ~std::uint64_t{0}, 0));
  ASSERT_GE(w.ops[0].size(), 3u);
  EXPECT_EQ(w.ops[0][0].kind(), OpKind::Malloc);
  EXPECT_EQ(w.ops[0][1].kind(), OpKind::Touch);
  EXPECT_EQ(w.ops[0][1].size(), 2 * kPage);
  EXPECT_EQ(w.ops[0][2].kind(), OpKind::Realloc);
}
#endif  // STRATA_TEST_GLIBC_MALLOC

#ifdef STRATA_TEST_GLIBC_MALLOC
// Thread 1 writes a 128 MiB block (no allocator time: the writes are the replay's) before it
// creates the object thread 0 frees, so thread 0 waits for it; the wait is not allocator time.
// The block stays live (the replay frees what is left untimed, after its measurements), so
// the allocator calls timed are three that take microseconds: mmap(128 MiB) untouched, and a
// 16-byte malloc and free. Thread 0 waits about as long as the whole replay takes (the
// 128 MiB write), so if the wait were counted allocator time would be most of the wall time,
// in every replay, however loaded the machine. Counted correctly it is a tiny part; it could
// exceed a quarter only if one of those three calls was descheduled for longer than a
// quarter of the write, so the property must hold in at least one of five replays.
TEST(ReplayThreads, AllocatorTimeHoldsNoWaiting) {
  TraceBuilder b;
  b.malloc(std::uint64_t{128} << 20, 1);
  const auto x = b.malloc(16, 1);
  b.free(x, 0);
  const Bytes t = b.finish();
  EngineOptions o;
  o.windowEvents = 1000;  // one window: thread 0 starts its free at once and must wait
  std::string seen;
  bool held = false;
  for (int attempt = 0; attempt < 5 && !held; ++attempt) {
    const ReplayResult r = replayMemory(t.data(), t.size(), o);
    ASSERT_EQ(r.status, ReplayStatus::Ok) << r.detail;
    EXPECT_EQ(r.threads, 2u);
    EXPECT_EQ(r.threadMode, ThreadMode::Pool);
    EXPECT_GT(r.allocatorSeconds, 0.0) << "the allocator calls were timed";
    held = r.allocatorSeconds < r.wallSeconds / 4;
    seen += " allocator " + std::to_string(r.allocatorSeconds) + " s of wall " +
            std::to_string(r.wallSeconds) + " s;";
  }
  EXPECT_TRUE(held) << "allocator time includes the wait in every replay:" << seen;
}
#endif  // STRATA_TEST_GLIBC_MALLOC

// A trace of 50 short-lived threads, one at a time, beside the main thread: each replays on
// its own OS thread that ends with it, never more than two alive at once, every op replayed.
TEST(ReplayThreads, LifecycleStartsAndEndsThreadsAsRecorded) {
  for (const std::uint64_t windowEvents : {std::uint64_t{3}, std::uint64_t{100000}}) {
    TraceBuilder b;
    const auto keep = b.malloc(100, 0);
    for (std::uint32_t t = 1; t <= 50; ++t) {
      b.threadStart(t, 0);
      const auto a = b.malloc(64 * t, t);
      const auto c = b.malloc(32, t);
      b.free(a, t);
      b.free(c, 0);  // freed by the main thread: a cross-thread wait
      b.threadEnd(t);
    }
    b.free(keep, 0);
    const Bytes t = b.finish();
    EngineOptions o;
    o.verify = true;
    o.windowEvents = windowEvents;
    const ReplayResult r = replayMemory(t.data(), t.size(), o);
    ASSERT_EQ(r.status, ReplayStatus::Ok) << r.detail;
    EXPECT_EQ(r.threadMode, ThreadMode::Lifecycle);
    EXPECT_LE(r.threads, 2u) << "window " << windowEvents;
    EXPECT_EQ(r.threadsStarted, 51u);
    EXPECT_EQ(r.events, 2 + 50 * 6u);
    EXPECT_EQ(r.objects, 1 + 50 * 2u);
    EXPECT_EQ(r.verifyErrors, 0u);
    EXPECT_EQ(r.recordedThreads, 51u);
  }
}

// Overlapping threads handing objects to each other, started and ended at random, with small
// windows: every object keeps its contents, and the counts match a single-thread replay.
TEST(ReplayThreads, OverlappingLifecycleThreadsMatchSingleThreadReplay) {
  std::mt19937_64 rng(9);
  TraceBuilder b(1 << 14);
  std::vector<std::uint64_t> live;
  std::vector<std::uint32_t> alive;
  std::uint32_t next = 1;
  for (int i = 0; i < 20000; ++i) {
    const unsigned c = static_cast<unsigned>(rng() % 100);
    if (c < 2 && alive.size() < 12) {
      b.threadStart(next, 0);
      alive.push_back(next++);
    } else if (c < 4 && !alive.empty()) {
      const std::size_t k = rng() % alive.size();
      b.threadEnd(alive[k]);
      alive[k] = alive.back();
      alive.pop_back();
    } else {
      const std::uint32_t t = alive.empty() ? 0 : alive[rng() % alive.size()];
      if (live.empty() || c < 55) {
        live.push_back(b.malloc(rng() % 2000, t));
      } else {
        const std::size_t k = rng() % live.size();
        b.free(live[k], t);
        live[k] = live.back();
        live.pop_back();
      }
    }
  }
  const Bytes t = b.finish();
  EngineOptions o;
  o.verify = true;
  o.windowEvents = 500;
  const ReplayResult r = replayMemory(t.data(), t.size(), o);
  o.threads = 1;
  const ReplayResult s = replayMemory(t.data(), t.size(), o);
  ASSERT_EQ(r.status, ReplayStatus::Ok) << r.detail;
  ASSERT_EQ(s.status, ReplayStatus::Ok) << s.detail;
  EXPECT_EQ(r.threadMode, ThreadMode::Lifecycle);
  EXPECT_LE(r.threads, 13u);
  EXPECT_EQ(r.threadsStarted, next);
  EXPECT_EQ(r.verifyErrors, 0u);
  EXPECT_EQ(r.events, s.events);
  EXPECT_EQ(r.peakLiveBytes, s.peakLiveBytes);
  EXPECT_EQ(r.failedAllocations, 0u);
}

// An event on a thread after its ThreadEnd starts it again; forcing a thread count replays
// the same trace on the pool.
TEST(ReplayThreads, EventAfterThreadEndRestartsAndForcedCountUsesThePool) {
  TraceBuilder b;
  b.threadStart(1, 0);
  const auto a = b.malloc(10, 1);
  b.threadEnd(1);
  b.free(a, 1);  // thread 1 again
  b.threadEnd(1);
  const Bytes t = b.finish();
  EngineOptions o;
  o.verify = true;
  ReplayResult r = replayMemory(t.data(), t.size(), o);
  ASSERT_EQ(r.status, ReplayStatus::Ok) << r.detail;
  EXPECT_EQ(r.threadMode, ThreadMode::Lifecycle);
  EXPECT_EQ(r.threadsStarted, 2u);
  EXPECT_EQ(r.threads, 1u);
  o.threads = 2;
  r = replayMemory(t.data(), t.size(), o);
  ASSERT_EQ(r.status, ReplayStatus::Ok) << r.detail;
  EXPECT_EQ(r.threadMode, ThreadMode::Pool);
  EXPECT_EQ(r.threads, 2u);
}

// More threads alive at once than lifecycle replay gives a thread each: the pool, and the
// detail says why.
TEST(ReplayThreads, TooManyLiveThreadsFallBackToThePool) {
  TraceBuilder b(1 << 16);
  const auto n = static_cast<std::uint32_t>(kMaxLifecycleThreads + 1);
  for (std::uint32_t t = 1; t <= n; ++t) b.threadStart(t, 0);
  for (std::uint32_t t = 1; t <= n; ++t) b.threadEnd(t);
  b.malloc(1, 0);
  const Bytes t = b.finish();
  const ReplayResult r = replayMemory(t.data(), t.size(), EngineOptions{});
  ASSERT_EQ(r.status, ReplayStatus::Ok) << r.detail;
  EXPECT_EQ(r.threadMode, ThreadMode::Pool);
  EXPECT_EQ(r.threads, kMaxReplayThreads);
  EXPECT_NE(r.detail.find("threads alive at once"), std::string::npos) << r.detail;
}

// A version 1 trace (no Touch, no thread events, no program chunk) still replays, on the pool.
TEST(ReplayThreads, VersionOneTracesReplayOnThePool) {
  TraceBuilder b;
  std::uint64_t ids[4];
  for (std::uint32_t t = 0; t < 4; ++t) ids[t] = b.malloc(100 + t, t);
  for (std::uint32_t t = 0; t < 4; ++t) b.free(ids[t], (t + 1) % 4);
  Bytes v1 = b.finish();
  ASSERT_EQ(trace::getU16(v1.data() + 8), 2u);
  v1[8] = 1;  // the same bytes are a valid version 1 trace
  EngineOptions o;
  o.verify = true;
  const ReplayResult r = replayMemory(v1.data(), v1.size(), o);
  ASSERT_EQ(r.status, ReplayStatus::Ok) << r.detail;
  EXPECT_EQ(r.threadMode, ThreadMode::Pool);
  EXPECT_EQ(r.threads, 4u);
  EXPECT_EQ(r.events, 8u);
  EXPECT_EQ(r.peakLiveBytes, 406u);
}

// The replayer's tables (object table, sizes, plan) are its own mappings, not heap: a trace of
// a million tiny objects on the do-nothing allocator has a peak heap near 0, measured from a
// baseline taken before the replay allocated anything.
TEST(ReplayOwnMemory, TablesAreNotCountedAsHeap) {
  TraceBuilder b(1 << 16);
  for (int i = 0; i < 1'000'000; ++i) b.malloc(8);
  const Bytes t = b.finish();
  EngineOptions o = oneThread();
  o.allocator = EngineAllocator::None;
  const std::uint64_t anon = strata::support::anonResidentBytes(), own = ownResidentBytes();
  o.baselineBytes = anon > own ? anon - own : 0;
  const ReplayResult r = replayMemory(t.data(), t.size(), o);
  ASSERT_EQ(r.status, ReplayStatus::Ok) << r.detail;
  EXPECT_EQ(r.objects, 1'000'000u);
  // The tables alone are 17 MB (8 B pointer + 8 B size + 1 B state an object).
  EXPECT_LT(r.peakHeapBytes, std::uint64_t{1} << 20);
  EXPECT_LT(r.startupHeapBytes, std::uint64_t{1} << 20);
}

TEST(ReplayOwnMemory, OwnAllocationsAreCountedResident) {
  const std::uint64_t before = ownResidentBytes();
  OwnVector<unsigned char> v(std::size_t{8} << 20, 1);  // written: resident
  EXPECT_GE(ownResidentBytes(), before + (std::uint64_t{8} << 20));
  v.clear();
  v.shrink_to_fit();
  EXPECT_LT(ownResidentBytes(), before + (std::uint64_t{1} << 20));
}

// Small requests of the own allocator honour the type's alignment, whatever came before.
TEST(ReplayOwnMemory, SmallBlocksAreAlignedToTheirType) {
  struct alignas(64) Padded {
    char c[64];
  };
  OwnVector<char> odd(24);
  OwnVector<Padded> padded(1);
  OwnVector<short> odd2(9);
  OwnVector<Padded> padded2(3);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(padded.data()) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(padded2.data()) % 64, 0u);
}

// A thread index too large to give every index a slot replays on the pool, and says why.
TEST(ReplayThreads, HugeThreadIndexesUseThePool) {
  TraceBuilder b;
  b.threadStart(1u << 20, 0);
  b.free(b.malloc(10, 1u << 20), 1u << 20);
  const Bytes t = b.finish();
  const ReplayResult r = replayMemory(t.data(), t.size(), EngineOptions{});
  ASSERT_EQ(r.status, ReplayStatus::Ok) << r.detail;
  EXPECT_EQ(r.threadMode, ThreadMode::Pool);
  EXPECT_NE(r.detail.find("thread indexes"), std::string::npos) << r.detail;
}

TEST(ReplayResultFile, NewFieldsRoundTrip) {
  ReplayResult r;
  r.status = ReplayStatus::Ok;
  r.threadMode = ThreadMode::Lifecycle;
  r.threadsStarted = 51;
  r.allocatorSeconds = 0.125;
  r.startupHeapBytes = 3u << 20;
  ReplayResult back;
  ASSERT_TRUE(fromKeyValues(toKeyValues(r), back));
  EXPECT_EQ(back.threadMode, ThreadMode::Lifecycle);
  EXPECT_EQ(back.threadsStarted, 51u);
  EXPECT_EQ(back.allocatorSeconds, 0.125);
  EXPECT_EQ(back.startupHeapBytes, 3u << 20);
  const std::string json = toJson(r);
  EXPECT_NE(json.find("\"thread_mode\": \"lifecycle\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"allocator_seconds\": 0.125"), std::string::npos) << json;
  EXPECT_NE(json.find("\"startup_heap_bytes\": 3145728"), std::string::npos) << json;
  EXPECT_NE(json.find("\"threads_started\": 51"), std::string::npos) << json;
  for (const ReplayStatus s : {ReplayStatus::Ok, ReplayStatus::HeapLimit, ReplayStatus::OutOfMemory,
                               ReplayStatus::Crashed, ReplayStatus::Unavailable, ReplayStatus::Error,
                               ReplayStatus::TraceError}) {
    r.status = s;
    ASSERT_TRUE(fromKeyValues(toKeyValues(r), back));
    EXPECT_EQ(back.status, s) << statusName(s);
  }
  EXPECT_STREQ(statusName(ReplayStatus::TraceError), "trace-error");
  EXPECT_FALSE(fromKeyValues("status=fine\n", back));
}

}  // namespace
