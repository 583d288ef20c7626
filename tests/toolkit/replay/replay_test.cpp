// Replay (toolkit/replay): the plan decoder against hand-built traces (live bytes, reap
// expansion, realloc chains, failed events, new/delete families), the replay loop in this
// process with --verify semantics on the process's malloc (random traces, threads and
// cross-thread frees), corrupt traces, and `strata replay` end to end.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/process.hpp"
#include "common/require.hpp"
#include "trace_builder.hpp"
#include "replay/engine.hpp"
#include "replay/measure.hpp"
#include "replay/plan.hpp"
#include "replay/result_file.hpp"
#include "strata/trace/reader.hpp"
#include "strata/trace/writer.hpp"

namespace {

namespace fs = std::filesystem;
using namespace strata;
using namespace strata::replay;
using trace::Event;
using trace::Op;
using strata::test::Bytes;
using strata::test::TraceBuilder;

// Decodes a whole trace into one window per replay thread.
struct Decoded {
  PlanWindow window;
  PlanCounts counts;
  bool failed = false;
  std::string error;
};
Decoded decodeAll(const Bytes& t, unsigned threads = 1) {
  PlanDecoder<trace::MemorySource> d(trace::MemorySource{t.data(), t.size()}, threads);
  Decoded r;
  d.decodeWindow(r.window, ~std::uint64_t{0}, 0);
  r.counts = d.counts();
  r.failed = d.failed();
  if (r.failed) r.error = d.errorMessage();
  return r;
}

// "Malloc(0,100) Free(0) ..." for a thread's ops, for readable expectations.
template <class Ops>
std::string describe(const Ops& ops) {
  static const char* names[] = {"Malloc", "Calloc", "Realloc", "Memalign", "New",
                                "NewAligned", "Free", "Delete", "DeleteAligned", "Touch"};
  std::string s;
  for (const PlanOp& op : ops) {
    if (!s.empty()) s += ' ';
    s += names[static_cast<int>(op.kind())];
    s += "(" + std::to_string(op.object);
    if (op.kind() == OpKind::Realloc) s += "<-" + std::to_string(op.other);
    if (op.size() != 0) s += "," + std::to_string(op.size());
    if (op.alignLog2() != 0) s += ",a" + std::to_string(op.alignLog2());
    s += ")";
  }
  return s;
}

TEST(ReplayPlan, LiveBytesAndReallocChains) {
  TraceBuilder b;
  const auto a = b.malloc(100);                        // live 100
  const auto c = b.malloc(50);                         // 150
  b.free(a);                                           // 50
  const auto r1 = b.add(Op::Realloc, 200, c);          // 200
  const auto r2 = b.add(Op::Realloc, 30, r1);          // 30
  const auto r3 = b.add(Op::Realloc, 10, trace::kNoObject, trace::kNoObject, trace::kFlagNull);  // 40
  b.free(r2);                                          // 10
  b.add(Op::Free, 0, trace::kNoObject, trace::kNoObject, trace::kFlagNull);  // free(NULL)
  b.free(r3);                                          // 0
  const Decoded d = decodeAll(b.finish());
  ASSERT_FALSE(d.failed) << d.error;
  EXPECT_EQ(describe(d.window.ops[0]),
            "Malloc(0,100) Malloc(1,50) Free(0) Realloc(2<-1,200) Realloc(3<-2,30) Malloc(4,10) "
            "Free(3) Free(4)");
  EXPECT_EQ(d.counts.events, 9u);
  EXPECT_EQ(d.counts.objects, 5u);
  EXPECT_EQ(d.counts.peakLiveBytes, 200u);
  EXPECT_EQ(d.counts.liveBytes, 0u);
  EXPECT_EQ(d.counts.liveObjects, 0u);
  EXPECT_EQ(d.window.liveBytesAtEnd, 0u);
}

TEST(ReplayPlan, NestedReapsExpandToFrees) {
  TraceBuilder b;
  const auto top = b.add(Op::ReapCreate, 0, trace::kNoObject, trace::kNoObject, trace::kFlagNull);
  const auto mid = b.add(Op::ReapCreate, 0, top);
  const auto leaf = b.add(Op::ReapCreate, 0, mid);
  const auto x = b.add(Op::ReapMalloc, 10, top);
  const auto y = b.add(Op::ReapMalloc, 20, mid);
  const auto z = b.add(Op::ReapMalloc, 30, mid);
  const auto w = b.add(Op::ReapMalloc, 40, leaf);
  b.add(Op::ReapFree, 0, mid, z);                     // z freed alone: not freed again by clear
  const auto m = b.malloc(5);                         // not in any reap: survives the clear
  b.add(Op::ReapClear, 0, top);                       // frees x, y, w; destroys mid and leaf
  const auto x2 = b.add(Op::ReapMalloc, 7, top);      // the cleared reap is still usable
  b.add(Op::ReapDestroy, 0, top);                     // frees x2
  b.free(m);
  const Decoded d = decodeAll(b.finish());
  ASSERT_FALSE(d.failed) << d.error;
  EXPECT_EQ(describe(d.window.ops[0]),
            "Malloc(3,10) Malloc(4,20) Malloc(5,30) Malloc(6,40) Free(5) Malloc(7,5) Free(3) "
            "Free(4) Free(6) Malloc(8,7) Free(8) Free(7)");
  (void)x; (void)y; (void)z; (void)w; (void)x2;
  EXPECT_EQ(d.counts.peakLiveBytes, 100u);
  EXPECT_EQ(d.counts.liveBytes, 0u);
  EXPECT_EQ(d.counts.liveObjects, 0u);
}

TEST(ReplayPlan, FailedEventsAreSkippedAndReallocZeroFrees) {
  TraceBuilder b;
  b.add(Op::Malloc, 1ull << 40, trace::kNoObject, trace::kNoObject, trace::kFlagFailed);
  const auto a = b.malloc(64);
  b.add(Op::Realloc, 1ull << 40, a, trace::kNoObject, trace::kFlagFailed);  // a stays live
  const auto c = b.malloc(8);
  b.add(Op::Realloc, 0, c, trace::kNoObject, trace::kFlagFailed);           // realloc(c, 0) freed c
  b.free(a);
  b.free(a);                                                                // double free: ignored
  const Decoded d = decodeAll(b.finish());
  ASSERT_FALSE(d.failed) << d.error;
  EXPECT_EQ(describe(d.window.ops[0]), "Malloc(0,64) Malloc(1,8) Free(1) Free(0)");
  EXPECT_EQ(d.counts.failedEvents, 3u);
  EXPECT_EQ(d.counts.ignoredFrees, 1u);
  EXPECT_EQ(d.counts.peakLiveBytes, 72u);
  EXPECT_EQ(d.counts.liveBytes, 0u);
}

TEST(ReplayPlan, NewDeleteFamiliesAndThreads) {
  TraceBuilder b;
  const auto n = b.add(Op::New, 24, trace::kNoObject, trace::kNoObject, 0, 1);
  const auto an = b.add(Op::New, 64, trace::kNoObject, trace::kNoObject, trace::kFlagAligned, 1, 6);
  const auto ma = b.add(Op::Memalign, 100, trace::kNoObject, trace::kNoObject, trace::kFlagAligned, 0, 12);
  const auto ca = b.add(Op::Calloc, 16, trace::kNoObject, trace::kNoObject, 0, 0);
  b.add(Op::Delete, 0, trace::kNoObject, an, 0, 0);   // deleted on another thread
  b.add(Op::Delete, 0, trace::kNoObject, n, 0, 1);
  b.add(Op::Free, 0, trace::kNoObject, ma, 0, 1);
  b.add(Op::Realloc, 32, ca, trace::kNoObject, 0, 0);
  const Decoded d = decodeAll(b.finish(), 2);
  ASSERT_FALSE(d.failed) << d.error;
  ASSERT_EQ(d.window.ops.size(), 2u);
  EXPECT_EQ(describe(d.window.ops[0]), "Memalign(2,100,a12) Calloc(3,16) DeleteAligned(1,a6) Realloc(4<-3,32)");
  EXPECT_EQ(describe(d.window.ops[1]), "New(0,24) NewAligned(1,64,a6) Delete(0) Free(2)");
}

// Operations name slots: a slot freed in one window holds a new object from the next window
// on, never in the window that freed it (threads of a window may wait on a slot for its
// object), and the live object in a slot keeps it.
TEST(ReplayPlan, FreedSlotsAreReusedFromTheNextWindowOn) {
  TraceBuilder b;
  const auto keep = b.malloc(8);  // slot 0, live throughout
  const auto a = b.malloc(16);    // slot 1
  b.free(a);
  b.malloc(24);                   // same window: a new slot, 2
  b.malloc(32);                   // next window: slot 1 again
  b.free(keep);
  b.malloc(40);                   // a window later: slot 0
  const Bytes t = b.finish();
  PlanDecoder<trace::MemorySource> d(trace::MemorySource{t.data(), t.size()}, 1);
  PlanWindow w;
  std::vector<std::string> windows;
  for (const std::uint64_t events : {4u, 2u, 1u})
    if (d.decodeWindow(w, events, 0)) windows.push_back(describe(w.ops[0]));
  ASSERT_FALSE(d.failed()) << d.errorMessage();
  EXPECT_EQ(windows, (std::vector<std::string>{"Malloc(0,8) Malloc(1,16) Free(1) Malloc(2,24)",
                                               "Malloc(1,32) Free(0)", "Malloc(0,40)"}));
  EXPECT_EQ(d.slotCount(), 3u);
  EXPECT_EQ(d.counts().objects, 5u);
}

// A long trace of a small live set needs as many slots as objects live at once plus a
// window's frees, however many objects it makes.
TEST(ReplayPlan, SlotsFollowTheLiveSetNotTheObjectsEverMade) {
  TraceBuilder b(1 << 16);
  std::vector<std::uint64_t> ring;
  for (int i = 0; i < 200000; ++i) {
    if (ring.size() == 50) {
      b.free(ring[static_cast<std::size_t>(i) % 50]);
      ring[static_cast<std::size_t>(i) % 50] = b.malloc(static_cast<std::uint64_t>(i % 300));
    } else {
      ring.push_back(b.malloc(static_cast<std::uint64_t>(i % 300)));
    }
  }
  const Bytes t = b.finish();
  PlanDecoder<trace::MemorySource> d(trace::MemorySource{t.data(), t.size()}, 1);
  PlanWindow w;
  while (d.decodeWindow(w, 1000, 0)) {
  }
  ASSERT_FALSE(d.failed()) << d.errorMessage();
  EXPECT_EQ(d.counts().objects, 200000u);
  EXPECT_EQ(d.counts().liveObjects, 50u);
  EXPECT_LE(d.slotCount(), 50u + 1000u);  // live ones, and those a window freed
}

// A random trace: `threads` threads allocating with every entry point and freeing random live
// objects, some on another thread. Returns the trace and its peak live bytes.
struct RandomTrace {
  Bytes bytes;
  std::uint64_t events = 0;
  std::uint64_t peakLive = 0;
};
RandomTrace randomTrace(std::uint64_t seed, std::uint32_t threads, int ops, bool trailer = true) {
  std::mt19937_64 rng(seed);
  TraceBuilder b(8192);
  struct Live { std::uint64_t id, size; bool isNew; std::uint8_t align; };
  std::vector<Live> live;
  std::uint64_t liveBytes = 0;
  RandomTrace r;
  for (int i = 0; i < ops; ++i) {
    const std::uint32_t t = static_cast<std::uint32_t>(rng() % threads);
    const unsigned choice = static_cast<unsigned>(rng() % 100);
    const std::uint64_t size = rng() % 4 == 0 ? rng() % 20000 : rng() % 300;
    if (live.empty() || choice < 55) {
      Live l{0, size, false, 0};
      const unsigned kind = static_cast<unsigned>(rng() % 6);
      constexpr std::uint64_t none = trace::kNoObject;
      if (kind == 0) {
        l.id = b.add(Op::Calloc, size, none, none, 0, t);
      } else if (kind == 1) {
        const auto align = static_cast<std::uint8_t>(4 + rng() % 9);
        l.id = b.add(Op::Memalign, size, none, none, trace::kFlagAligned, t, align);
      } else if (kind == 2) {
        l.id = b.add(Op::New, size, none, none, 0, t);
        l.isNew = true;
      } else if (kind == 3) {
        l.align = static_cast<std::uint8_t>(5 + rng() % 6);
        l.id = b.add(Op::New, size, none, none, trace::kFlagAligned, t, l.align);
        l.isNew = true;
      } else {
        l.id = b.add(Op::Malloc, size, none, none, 0, t);
      }
      live.push_back(l);
      liveBytes += size;
    } else {
      const std::size_t k = rng() % live.size();
      Live l = live[k];
      live[k] = live.back();
      live.pop_back();
      liveBytes -= l.size;
      if (!l.isNew && choice < 70) {
        Live n{b.add(Op::Realloc, size, l.id, trace::kNoObject, 0, t), size, false, 0};
        live.push_back(n);
        liveBytes += size;
      } else {
        b.add(l.isNew ? Op::Delete : Op::Free, 0, trace::kNoObject, l.id, 0, t);
      }
    }
    ++r.events;
    r.peakLive = std::max(r.peakLive, liveBytes);
  }
  r.bytes = b.finish(trailer);
  return r;
}

TEST(ReplayEngine, RandomTracesKeepContentsOnTheProcessMalloc) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const RandomTrace t = randomTrace(seed, 1, 20000);
    EngineOptions o;
    o.verify = true;
    o.threads = 1;
    o.windowEvents = 3000;
    const ReplayResult r = replayMemory(t.bytes.data(), t.bytes.size(), o);
    EXPECT_EQ(r.status, ReplayStatus::Ok) << r.detail;
    EXPECT_EQ(r.verifyErrors, 0u);
    EXPECT_EQ(r.failedAllocations, 0u);
    EXPECT_EQ(r.events, t.events);
    EXPECT_EQ(r.peakLiveBytes, t.peakLive);
    ASSERT_GE(r.series.size(), 2u);
    EXPECT_EQ(r.series.back().event, t.events);
    for (std::size_t i = 1; i < r.series.size(); ++i)
      EXPECT_GT(r.series[i].event, r.series[i - 1].event);
  }
}

TEST(ReplayEngine, ThreadedReplayMatchesSingleThreadReplay) {
  const RandomTrace t = randomTrace(42, 4, 30000);
  EngineOptions o;
  o.verify = true;
  o.windowEvents = 1000;  // many windows: many barriers and cross-thread waits
  o.threads = 0;
  const ReplayResult a = replayMemory(t.bytes.data(), t.bytes.size(), o);
  const ReplayResult a2 = replayMemory(t.bytes.data(), t.bytes.size(), o);
  o.threads = 1;
  const ReplayResult s = replayMemory(t.bytes.data(), t.bytes.size(), o);
  for (const ReplayResult* r : {&a, &a2, &s}) {
    EXPECT_EQ(r->status, ReplayStatus::Ok) << r->detail;
    EXPECT_EQ(r->verifyErrors, 0u);
    EXPECT_EQ(r->events, t.events);
    EXPECT_EQ(r->objects, s.objects);
    EXPECT_EQ(r->peakLiveBytes, t.peakLive);
    EXPECT_EQ(r->failedAllocations, 0u);
    EXPECT_EQ(r->recordedThreads, 4u);
  }
  EXPECT_EQ(a.threads, 4u);
  EXPECT_EQ(s.threads, 1u);
  ASSERT_EQ(a.series.size(), s.series.size());
  for (std::size_t i = 0; i < a.series.size(); ++i) {
    EXPECT_EQ(a.series[i].event, s.series[i].event);
    EXPECT_EQ(a.series[i].liveBytes, s.series[i].liveBytes);
  }
}

TEST(ReplayEngine, TraceWithoutTrailerAndTheNoneAllocator) {
  const RandomTrace t = randomTrace(7, 2, 5000, /*trailer=*/false);
  EngineOptions o;
  o.allocator = EngineAllocator::None;
  const ReplayResult r = replayMemory(t.bytes.data(), t.bytes.size(), o);
  EXPECT_EQ(r.status, ReplayStatus::Ok) << r.detail;
  EXPECT_EQ(r.events, t.events);
  EXPECT_EQ(r.peakLiveBytes, t.peakLive);
  EXPECT_EQ(r.threads, 2u);
}

TEST(ReplayEngine, HeapLimitStopsTheRun) {
  TraceBuilder b(1 << 16);
  for (int i = 0; i < 2048; ++i) b.malloc(32 * 1024);  // 64 MiB live, written
  const Bytes t = b.finish();
  EngineOptions o;
  o.threads = 1;
  o.heapLimit = 4 << 20;
  const ReplayResult r = replayMemory(t.data(), t.size(), o);
  EXPECT_EQ(r.status, ReplayStatus::HeapLimit) << r.detail;
  EXPECT_LT(r.events, 2048u);
  EXPECT_GT(r.peakHeapBytes, std::uint64_t{4} << 20);
  // The overshoot is bounded: a sample at least every limit/16 bytes allocated.
  EXPECT_LT(r.peakHeapBytes, std::uint64_t{16} << 20);
}

// Corrupt versions of a valid trace: each must give trace-error naming a byte offset.
TEST(ReplayEngine, CorruptTracesReportTheByteOffset) {
  const RandomTrace t = randomTrace(3, 2, 4000);
  ASSERT_GT(t.bytes.size(), 200u);
  Bytes truncated(t.bytes.begin(), t.bytes.begin() + static_cast<long>(t.bytes.size() / 2));
  Bytes flipped = t.bytes;
  flipped[t.bytes.size() / 3] ^= 0x10;
  Bytes version = t.bytes;
  version[8] = 9;
  const std::map<std::string, Bytes> cases = {
      {"truncated chunk", truncated}, {"chunk CRC mismatch", flipped},
      {"unsupported format version", version}};
  for (const auto& [what, bytes] : cases) {
    EngineOptions o;
    const ReplayResult r = replayMemory(bytes.data(), bytes.size(), o);
    EXPECT_EQ(r.status, ReplayStatus::TraceError) << what;
    EXPECT_NE(r.detail.find(what), std::string::npos) << r.detail;
    EXPECT_NE(r.detail.find("at byte offset"), std::string::npos) << r.detail;
  }
}

TEST(ReplayResultFile, KeyValuesAndSeriesRoundTrip) {
  ReplayResult r;
  r.status = ReplayStatus::HeapLimit;
  r.detail = "over\nthe limit";
  r.events = 12;
  r.wallSeconds = 0.25;
  r.peakHeapBytes = 1ull << 40;
  r.fragmentationPercent = -3.5;
  ReplayResult back;
  ASSERT_TRUE(fromKeyValues(toKeyValues(r), back));
  EXPECT_EQ(back.status, ReplayStatus::HeapLimit);
  EXPECT_EQ(back.detail, "over the limit");
  EXPECT_EQ(back.events, 12u);
  EXPECT_EQ(back.wallSeconds, 0.25);
  EXPECT_EQ(back.peakHeapBytes, 1ull << 40);
  EXPECT_EQ(back.fragmentationPercent, -3.5);
  EXPECT_FALSE(fromKeyValues("events=x\nstatus=ok\n", back));
  std::vector<ReplaySample> s = {{0, 0, 0, 0}, {0.5, 10, 4096, 100}}, s2;
  ASSERT_TRUE(parseSeriesCsv(seriesCsv(s), s2));
  ASSERT_EQ(s2.size(), 2u);
  EXPECT_EQ(s2[1].event, 10u);
  EXPECT_EQ(s2[1].heapBytes, 4096u);
  EXPECT_EQ(s2[1].liveBytes, 100u);
}

#ifdef STRATA_CLI_PATH
// ---- `strata replay` end to end ----

using strata::test::slurp;
using strata::test::TempDir;

struct CliRun {
  int exitCode = -1;
  std::string out, err;
};

// Runs `strata ARGS...` (env: extra "NAME=VALUE" settings), capturing output through files.
CliRun strata(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  strata::test::EnvChanges changes;
  for (const std::string& e : env) {
    const std::size_t eq = e.find('=');
    changes.emplace_back(e.substr(0, eq), e.substr(eq + 1));
  }
  const strata::test::RunResult run = strata::test::runProgram(STRATA_CLI_PATH, args, changes);
  CliRun r;
  r.exitCode = run.exitCode();
  r.out = run.out;
  r.err = run.err;
  return r;
}

// The value of "key": in a flat JSON object printed by toJson (the text after the colon up to
// the next comma or brace, quotes removed).
std::string jsonField(const std::string& json, const std::string& key) {
  const std::size_t at = json.find("\"" + key + "\": ");
  if (at == std::string::npos) return "<missing>";
  std::size_t v = at + key.size() + 4;
  if (json[v] == '"') return json.substr(v + 1, json.find('"', v + 1) - v - 1);
  return json.substr(v, json.find_first_of(",}", v) - v);
}

// True when python3's json module accepts the text as one JSON object.
bool jsonParses(const TempDir& dir, const std::string& text) {
  const fs::path p = dir.path() / "out.json";
  std::ofstream(p) << text;
  const std::string cmd = "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
                          "sys.exit(0 if isinstance(d, dict) else 1)' '" + p.string() + "'";
  return std::system(cmd.c_str()) == 0;
}

TEST(ReplayCli, ReplaysOnGlibcAndPrintsJson) {
  TempDir dir;
  const RandomTrace t = randomTrace(11, 3, 20000);
  const fs::path trace = dir.write("t.trace", t.bytes);
  const CliRun text = strata({"replay", trace.string(), "--allocator", "glibc"});
  EXPECT_EQ(text.exitCode, 0) << text.err;
  EXPECT_NE(text.out.find("status"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("ok"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("fragmentation"), std::string::npos) << text.out;

  const fs::path csv = dir.path() / "series.csv";
  const CliRun json = strata({"replay", trace.string(), "--allocator=glibc", "--json", "--threads",
                           "1", "--series", csv.string()});
  EXPECT_EQ(json.exitCode, 0) << json.err;
  EXPECT_TRUE(jsonParses(dir, json.out)) << json.out;
  EXPECT_EQ(jsonField(json.out, "status"), "ok") << json.out;
  EXPECT_EQ(jsonField(json.out, "events"), std::to_string(t.events));
  EXPECT_EQ(jsonField(json.out, "peak_live_bytes"), std::to_string(t.peakLive));
  EXPECT_EQ(jsonField(json.out, "threads"), "1");
  EXPECT_EQ(jsonField(json.out, "heap_limit_hit"), "false");
  // A trace without trailer (the program crashed): sized by a counting pass over the file.
  const RandomTrace cut = randomTrace(12, 2, 5000, /*trailer=*/false);
  const CliRun noTrailer = strata({"replay", dir.write("cut.trace", cut.bytes).string(),
                                   "--allocator", "glibc", "--json"});
  EXPECT_EQ(noTrailer.exitCode, 0) << noTrailer.err;
  EXPECT_EQ(jsonField(noTrailer.out, "status"), "ok") << noTrailer.out;
  EXPECT_EQ(jsonField(noTrailer.out, "events"), std::to_string(cut.events));
  EXPECT_EQ(jsonField(noTrailer.out, "threads"), "2");

  std::vector<ReplaySample> series;
  ASSERT_TRUE(parseSeriesCsv(slurp(csv), series)) << slurp(csv);
  ASSERT_FALSE(series.empty());
  EXPECT_EQ(series.back().event, t.events);
}

TEST(ReplayCli, HeapLimitIsReported) {
  TempDir dir;
  TraceBuilder b(1 << 16);
  for (int i = 0; i < 1024; ++i) b.malloc(32 * 1024);
  const fs::path trace = dir.write("big.trace", b.finish());
  const CliRun r = strata({"replay", trace.string(), "--allocator", "glibc", "--heap-limit", "2M", "--json"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(jsonField(r.out, "status"), "heap-limit") << r.out;
  EXPECT_EQ(jsonField(r.out, "heap_limit_hit"), "true") << r.out;
}

TEST(ReplayCli, BadInput) {
  TempDir dir;
  const RandomTrace t = randomTrace(5, 1, 3000);
  const fs::path good = dir.write("good.trace", t.bytes);
  Bytes flipped = t.bytes;
  flipped[flipped.size() / 2] ^= 1;
  const fs::path bad = dir.write("bad.trace", flipped);

  CliRun r = strata({"replay", good.string(), "--allocator", "nosuch"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("unknown allocator 'nosuch'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("glibc, jemalloc, mimalloc"), std::string::npos) << r.err;

  r = strata({"replay", bad.string(), "--allocator", "glibc"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("strata replay: " + bad.string() + ": chunk CRC mismatch at byte offset"),
            std::string::npos) << r.err;

  r = strata({"replay", (dir.path() / "missing.trace").string(), "--allocator", "glibc"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("missing.trace: cannot open"), std::string::npos) << r.err;

  r = strata({"replay", good.string(), "--allocator", "strata"},
             {"STRATA_LIB_DIR=" + (dir.path() / "nolib").string()});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("build the CMake target strata_malloc"), std::string::npos) << r.err;

  r = strata({"replay", good.string()});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--allocator"), std::string::npos) << r.err;

  r = strata({"replay", good.string(), "--allocator", "glibc", "--heap-limit", "12Q"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--heap-limit"), std::string::npos) << r.err;
}

// A trace with thread start and end events replays its threads as recorded, through the
// child process too, and says so; the start-up heap is reported.
TEST(ReplayCli, LifecycleThreadsEndToEnd) {
  TempDir dir;
  TraceBuilder b;
  const auto keep = b.malloc(100, 0);
  for (std::uint32_t t = 1; t <= 8; ++t) {
    b.threadStart(t, 0);
    b.free(b.malloc(1000, t), t);
    b.threadEnd(t);
  }
  b.free(keep, 0);
  const fs::path trace = dir.write("threads.trace", b.finish());
#ifdef STRATA_TEST_PRELOAD
  const auto allocators = {"glibc", "jemalloc", "mimalloc", "strata"};
#else
  const auto allocators = {"glibc"};  // a sanitized replayer cannot take a preloaded allocator
#endif
  for (const char* name : allocators) {
    const CliRun r = strata({"replay", trace.string(), "--allocator", name, "--json"});
    if (r.exitCode == 1 && r.err.find("install") != std::string::npos) {  // not here
      strata::test::reportMissing(std::string(name) + ": " + r.err);
      continue;
    }
    EXPECT_EQ(r.exitCode, 0) << name << ": " << r.err;
    EXPECT_EQ(jsonField(r.out, "status"), "ok") << name << ": " << r.out;
    EXPECT_EQ(jsonField(r.out, "thread_mode"), "lifecycle") << r.out;
    EXPECT_EQ(jsonField(r.out, "threads_started"), "9") << r.out;
    EXPECT_NE(jsonField(r.out, "startup_heap_bytes"), "<missing>") << r.out;
    EXPECT_NE(jsonField(r.out, "allocator_seconds"), "<missing>") << r.out;
  }
  const CliRun text = strata({"replay", trace.string(), "--allocator", "glibc"});
  EXPECT_NE(text.out.find("as recorded"), std::string::npos) << text.out;
  const CliRun pool = strata({"replay", trace.string(), "--allocator", "glibc", "--threads", "2", "--json"});
  EXPECT_EQ(jsonField(pool.out, "thread_mode"), "pool") << pool.out;
}

#ifdef STRATA_TEST_PRELOAD
// Other allocators by LD_PRELOAD in the replayer (not under a sanitizer). An allocator whose
// library is not on this machine is skipped, with the sentence saying what to install.
TEST(ReplayCli, ReplaysOnPreloadedAllocators) {
  TempDir dir;
  const RandomTrace t = randomTrace(13, 2, 20000);
  const fs::path trace = dir.write("t.trace", t.bytes);
  for (const char* name : {"jemalloc", "mimalloc", "strata"}) {
    const CliRun r = strata({"replay", trace.string(), "--allocator", name, "--json"});
    if (r.exitCode == 1 && r.err.find("not") != std::string::npos &&
        r.err.find("install") != std::string::npos) {
      strata::test::reportMissing(std::string(name) + ": " + r.err);
      continue;
    }
    EXPECT_EQ(r.exitCode, 0) << name << ": " << r.err;
    EXPECT_EQ(jsonField(r.out, "status"), "ok") << name << ": " << r.out;
    EXPECT_NE(jsonField(r.out, "library"), "") << name;
    EXPECT_EQ(jsonField(r.out, "events"), std::to_string(t.events)) << name;
    EXPECT_EQ(jsonField(r.out, "peak_live_bytes"), std::to_string(t.peakLive)) << name;
  }
}

// --verify must catch an allocator that hands out overlapping blocks: two live 4000-byte
// objects from tests/toolkit/replay/broken_malloc.c share one block. The same trace on glibc passes.
TEST(ReplayCli, VerifyCatchesOverlappingBlocks) {
  TempDir dir;
  TraceBuilder b;
  const auto x = b.malloc(4000);
  const auto y = b.malloc(4000);
  b.free(x);
  b.free(y);
  const fs::path trace = dir.write("overlap.trace", b.finish());
  const fs::path result = dir.path() / "result.txt";
  auto replay = [&](const std::string& preload) {
    const std::string cmd = "env LD_PRELOAD='" + preload + "' '" STRATA_TEST_REPLAYER "' --trace '" +
                            trace.string() + "' --result '" + result.string() + "' --verify";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    ReplayResult r;
    EXPECT_TRUE(fromKeyValues(slurp(result), r)) << slurp(result);
    return r;
  };
  const ReplayResult broken = replay(STRATA_TEST_BROKEN_MALLOC);
  EXPECT_EQ(broken.status, ReplayStatus::Error) << broken.detail;
  EXPECT_EQ(broken.verifyErrors, 1u);  // x's contents were overwritten by y's
  const ReplayResult good = replay("");
  EXPECT_EQ(good.status, ReplayStatus::Ok) << good.detail;
  EXPECT_EQ(good.verifyErrors, 0u);
}

// The heap baseline: `strata-replayer --measure-baseline` prints its anonymous resident memory
// minus glibc's heap as one number, and baselineFromChild (what runReplay uses, with
// LD_PRELOAD removed) reads it back.
TEST(ReplayCli, MeasureBaselinePrintsANumber) {
  TempDir dir;
  const fs::path out = dir.path() / "baseline.txt";
  const std::string cmd = "'" STRATA_TEST_REPLAYER "' --measure-baseline > '" + out.string() + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const std::string text = slurp(out);
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  EXPECT_GT(v, 0u) << text;
  EXPECT_LT(v, 1ull << 30) << text;
  EXPECT_EQ(std::string(end), "\n") << text;
  const ChildBaseline fromChild = baselineFromChild(STRATA_TEST_REPLAYER);
  ASSERT_TRUE(fromChild.bytes) << fromChild.whyNot;
  EXPECT_GT(*fromChild.bytes, 0u);
}

// A replay that dies of a signal is reported as crashed, with the signal's name, and `strata
// replay` exits 1. (LD_PRELOAD already set is kept after the allocator's library, so the
// crashing malloc reaches the replayer through --allocator glibc.)
TEST(ReplayCli, CrashIsReported) {
  TempDir dir;
  TraceBuilder b;
  b.malloc(4001);
  const fs::path trace = dir.write("crash.trace", b.finish());
  const CliRun r = strata({"replay", trace.string(), "--allocator", "glibc", "--json"},
                          {"LD_PRELOAD=" STRATA_TEST_BROKEN_MALLOC});
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_EQ(jsonField(r.out, "status"), "crashed") << r.out;
  EXPECT_NE(r.out.find("SIGILL"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("strata replay: crashed on glibc"), std::string::npos) << r.err;
}
#endif
#endif

}  // namespace
