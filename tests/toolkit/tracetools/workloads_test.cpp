// The bundled workloads: deterministic (same name, seed and size -> the same bytes; another
// seed -> other bytes), valid traces, and the shape each one is meant to have.
#include <algorithm>

#include "support/error.hpp"
#include "test_util.hpp"
#include "tracetools/trace_stats.hpp"
#include "tracetools/workloads.hpp"

namespace {

using namespace tttest;
namespace tt = strata::tracetools;
using strata::trace::kFlagFailed;

// Live bytes after each event, and who allocated / freed what, from a trace's events.
struct Walk {
  std::vector<std::uint64_t> live;        // live bytes after event i
  std::uint64_t crossThreadFrees = 0;     // frees on another thread than the allocation's
  std::uint64_t frees = 0, allocations = 0, reallocs = 0;  // free/delete; malloc/new; realloc
  std::vector<std::uint32_t> threads;     // distinct threads seen
};

Walk walk(const std::vector<Event>& events) {
  Walk w;
  std::vector<std::uint64_t> size;
  std::vector<std::uint32_t> owner;
  std::uint64_t live = 0;
  for (const Event& e : events) {
    if (std::find(w.threads.begin(), w.threads.end(), e.thread) == w.threads.end())
      w.threads.push_back(e.thread);
    if (e.op == Op::Realloc) {
      ++w.reallocs;
      if (e.target != kNoObject) live -= size[e.target];
    } else if (e.op == Op::Free || e.op == Op::Delete) {
      live -= size[e.object];
      ++w.frees;
      if (owner[e.object] != e.thread) ++w.crossThreadFrees;
    }
    if (strata::trace::opCreates(e.op) && !(e.flags & kFlagFailed)) {
      if (e.op != Op::Realloc) ++w.allocations;
      size.resize(e.object + 1, 0);
      owner.resize(e.object + 1, 0);
      size[e.object] = e.size;
      owner[e.object] = e.thread;
      live += e.size;
    }
    w.live.push_back(live);
  }
  return w;
}

class Workloads : public ::testing::TestWithParam<const char*> {};

TEST_P(Workloads, DeterministicAndValid) {
  TempDir dir;
  const std::string a = dir / "a.trace", b = dir / "b.trace", c = dir / "c.trace";
  tt::generateWorkload(GetParam(), 7, 0.05, a);
  tt::generateWorkload(GetParam(), 7, 0.05, b);
  tt::generateWorkload(GetParam(), 8, 0.05, c);
  const std::string bytesA = slurp(a);
  EXPECT_FALSE(bytesA.empty());
  EXPECT_EQ(bytesA, slurp(b)) << "same name, seed and size must give the same bytes";
  EXPECT_NE(bytesA, slurp(c)) << "another seed must give another trace";
  bool complete = false;
  const std::vector<Event> events = strata::trace::readTrace(
      reinterpret_cast<const unsigned char*>(bytesA.data()), bytesA.size(), &complete);
  EXPECT_TRUE(complete);
  // About size x 1e6 events.
  EXPECT_GE(events.size(), 50000u);
  EXPECT_LT(events.size(), 52000u);
  // Times never go backwards (a simulated clock).
  for (std::size_t i = 1; i < events.size(); ++i) ASSERT_LE(events[i - 1].timeNs, events[i].timeNs);
  // The size scales the run.
  const std::string big = dir / "big.trace";
  const std::uint64_t written = tt::generateWorkloadEvents(GetParam(), 7, 0.1, big);
  EXPECT_EQ(written, readEvents(big).size());
  EXPECT_GE(written, 100000u);
}

INSTANTIATE_TEST_SUITE_P(All, Workloads,
                         ::testing::Values("web-proxy", "editor", "server", "steady"));

// The long-running workload's live set is the same however long it runs: ten times the events
// give ten times the objects, the same number live at the peak and about the same live bytes.
TEST(Workloads, SteadyKeepsItsLiveSetAtEverySize) {
  TempDir dir;
  tt::generateWorkload("steady", 3, 0.05, dir / "short.trace");
  tt::generateWorkload("steady", 3, 0.5, dir / "long.trace");
  const tt::TraceStats a = tt::computeStats(dir / "short.trace");
  const tt::TraceStats b = tt::computeStats(dir / "long.trace");
  EXPECT_EQ(a.maxLiveObjects, 4097u) << "the cache and one scratch buffer";
  EXPECT_EQ(b.maxLiveObjects, a.maxLiveObjects);
  EXPECT_GT(b.totalObjects, 9 * a.totalObjects);
  EXPECT_LT(static_cast<double>(b.peakLiveBytes), 1.2 * static_cast<double>(a.peakLiveBytes));
  EXPECT_GT(a.peakLiveBytes, 2u << 20) << "about 4,096 objects of 16 B-4 KiB, log-uniform";
  EXPECT_LT(a.peakLiveBytes, 4u << 20);
  EXPECT_EQ(b.badFrees, 0u);
  EXPECT_EQ(b.neverFreed, 4096u);
}

TEST(Workloads, ListAndLookup) {
  ASSERT_EQ(tt::bundledWorkloads().size(), 3u) << "the ones compare runs";
  EXPECT_EQ(tt::bundledWorkloads()[0].name, "web-proxy");
  ASSERT_EQ(tt::allWorkloads().size(), 4u);
  EXPECT_EQ(tt::allWorkloads()[3].name, "steady");
  ASSERT_NE(tt::findWorkload("steady"), nullptr);
  ASSERT_NE(tt::findWorkload("server"), nullptr);
  EXPECT_FALSE(tt::findWorkload("server")->description.empty());
  EXPECT_EQ(tt::findWorkload("nope"), nullptr);
  TempDir dir;
  try {
    tt::generateWorkload("nope", 1, 0.01, dir / "x.trace");
    FAIL() << "unknown workload accepted";
  } catch (const strata::support::UsageError& e) {
    EXPECT_TRUE(contains(e.what(), "web-proxy, editor, server, steady")) << e.what();
  }
  EXPECT_THROW(tt::generateWorkload("editor", 1, 0, dir / "x.trace"), strata::support::UsageError);
  try {
    tt::generateWorkload("editor", 1, 0.01, dir / "no/such/dir/x.trace");
    FAIL() << "unwritable path accepted";
  } catch (const strata::support::Error& e) {
    EXPECT_TRUE(contains(e.what(), "no/such/dir/x.trace")) << e.what();
  }
}

TEST(Workloads, WebProxyKeepsLiveMemoryInABandAndReplacesObjects) {
  TempDir dir;
  const std::string path = dir / "p.trace";
  tt::generateWorkload("web-proxy", 3, 0.1, path);
  const std::vector<Event> events = readEvents(path);
  const Walk w = walk(events);
  const std::uint64_t peak = *std::max_element(w.live.begin(), w.live.end());
  // The cache is 48 MiB x size = 4.8 MiB here.
  EXPECT_GT(peak, 4'500'000u);
  EXPECT_LT(peak, 5'400'000u);
  // Warm-up ends when live memory first reaches 90% of its peak; from then on it stays
  // within 75%-100% of the peak: a fixed total of live memory.
  const auto warm = std::find_if(w.live.begin(), w.live.end(),
                                 [&](std::uint64_t v) { return v >= peak * 9 / 10; });
  ASSERT_NE(warm, w.live.end());
  EXPECT_LT(warm - w.live.begin(), static_cast<std::ptrdiff_t>(w.live.size() / 5));
  EXPECT_GE(*std::min_element(warm, w.live.end()), peak * 3 / 4);
  // Objects are replaced over and over: frees nearly match allocations.
  EXPECT_GT(w.frees, w.allocations * 9 / 10);
  // Variable, heavy-tailed sizes: from under 256 bytes to over 128 KiB.
  const tt::TraceStats s = tt::computeStats(path);
  ASSERT_GE(s.sizes.counts.size(), 18u);
  EXPECT_GT(s.sizes.counts[7], 0u);
  EXPECT_GT(s.sizes.counts[17], 0u);
  EXPECT_EQ(w.threads.size(), 1u);
}

TEST(Workloads, EditorLiveMemoryKeepsGrowing) {
  TempDir dir;
  const std::string path = dir / "e.trace";
  tt::generateWorkload("editor", 3, 0.1, path);
  const Walk w = walk(readEvents(path));
  const std::uint64_t atTenth = w.live[w.live.size() / 10];
  EXPECT_GT(w.live.back(), 4 * atTenth) << "at 10%: " << atTenth << ", end: " << w.live.back();
  // It ends at (or very near) its peak: memory is rarely given back.
  EXPECT_GE(w.live.back(), *std::max_element(w.live.begin(), w.live.end()) * 9 / 10);
  EXPECT_GT(w.reallocs, w.allocations / 4);  // lines edited in place
  EXPECT_LT(w.frees, w.allocations / 3);     // few frees
}

TEST(Workloads, ServerHasThreadsAndCrossThreadFrees) {
  TempDir dir;
  const std::string path = dir / "s.trace";
  tt::generateWorkload("server", 3, 0.05, path);
  const std::vector<Event> events = readEvents(path);
  const Walk w = walk(events);
  EXPECT_EQ(w.threads.size(), 4u);
  // Requests (thread 0 -> worker) and responses (worker -> thread 0) cross threads.
  EXPECT_GT(w.crossThreadFrees, w.frees / 50);
  // Per-request scratch: most objects die young, so live memory stays far below the total.
  const tt::TraceStats s = tt::computeStats(path);
  EXPECT_GT(s.totalOverPeak, 5.0);
  EXPECT_EQ(s.threads, 4u);
}

}  // namespace
