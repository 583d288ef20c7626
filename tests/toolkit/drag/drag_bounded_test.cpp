// The drag analysis's memory follows the live objects, not the run's length: a trace of two
// million objects with at most three live at once, analysed with small sort runs (so the
// external sorts spill and merge), holds a few ids and a few MB, and gives the figures worked
// out below, the same as when everything is sorted in one run. And the external sort itself,
// with more runs than it merges at once.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "drag/drag_analysis.hpp"
#include "drag/drag_ideal_trace.hpp"
#include "drag_test_util.hpp"
#include "tracetools/external_sort.hpp"
#include "strata/detail/poison.hpp"  // STRATA_ASAN
#include "tracetools/trace_file.hpp"

namespace {

using namespace dragtest;

// N objects of 16 bytes. Event order: malloc 0, malloc 1, then for k = 2..N-1 malloc k (seq
// 2k-2) and free of k-2 (seq 2k-1); objects N-2 and N-1 stay live. Object j is created at
// clock 16(j+1) and freed after malloc j+2 (clock 16(j+3)); an even j is never used after its
// creation, an odd one up to the event before its free (the malloc of j+2, clock 16(j+3)).
// Under AddressSanitizer the resident-memory bound below is not checked (freed memory stays
// in its quarantine), so the run is an eighth as long, in sort runs an eighth as long: the
// same number of runs, merged in the same rounds, the same bound on live ids.
#ifdef STRATA_ASAN
constexpr std::uint64_t kScale = 8;
#else
constexpr std::uint64_t kScale = 1;
#endif
constexpr std::uint64_t kN = 2'000'000 / kScale;

std::uint64_t createdAt(std::uint64_t j) { return j < 2 ? j : 2 * j - 2; }

// Writes the trace and its last-use file (records in release order, then those at exit)
// to dir, streaming, and returns their paths.
std::pair<std::string, std::string> writeRun(const TempDir& dir) {
  const std::string trace = (dir.path() / "big.trace").string();
  const std::string lastUse = (dir.path() / "big.lastuse").string();
  tt::TraceFile t(trace);
  std::ofstream lu(lastUse, std::ios::binary);
  auto put = [&lu](std::uint64_t v) { lu.write(reinterpret_cast<const char*>(&v), 8); };
  lu.write(STRATA_DRAG_MAGIC, 8);
  put(STRATA_DRAG_VERSION);
  put(4242);
  auto record = [&](std::uint64_t j, std::uint64_t release) {
    put(j);
    put(j % 2 == 0 || release == kAtExit ? createdAt(j) : 2 * j + 2);
    put(release);
  };
  for (std::uint64_t k = 0; k < kN; ++k) {
    t.append(ev(Op::Malloc, 16));
    if (k >= 2) {
      t.append(ev(Op::Free, 0, kNoObject, k - 2));
      record(k - 2, 2 * k - 1);
    }
  }
  record(kN - 2, kAtExit);
  record(kN - 1, kAtExit);
  put(STRATA_DRAG_END);
  put(kN);
  put(0);
  t.finish();
  return {trace, lastUse};
}

// The process's peak resident set since the last reset, in KiB (0 when unknown).
std::uint64_t peakRssKiB() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6));
  return 0;
}
bool resetPeakRss() { return static_cast<bool>(std::ofstream("/proc/self/clear_refs") << "5"); }

TEST(DragBounded, MillionsOfShortLivedObjectsHoldFewIdsAndLittleMemory) {
  TempDir dir;
  const auto [trace, lastUsePath] = writeRun(dir);
  const dg::LastUseData lu = dg::readLastUseFile(lastUsePath);
  ASSERT_EQ(lu.recordCount, kN);
  dg::DragOptions small;
  small.tempDir = dir.path().string();
  // About 490 runs of object records, merged in two rounds.
  small.sortRunRecords = 4096 / kScale;

  const bool measured = resetPeakRss();
  const std::uint64_t before = peakRssKiB();
  const dg::DragResult r = dg::analyzeDrag(trace, lu, small);
  const dg::IdealTraceCounts c =
      dg::writeIdealTrace(trace, lu, r, (dir.path() / "ideal.trace").string(), small);
  const std::uint64_t after = peakRssKiB();
  RecordProperty("peak_rss_growth_kib", std::to_string(after - before));
#ifndef STRATA_ASAN
  // (Under AddressSanitizer freed memory stays in its quarantine, so resident memory says
  // nothing there; the bound on live ids below holds in every build.)
  ASSERT_TRUE(measured && before != 0) << "/proc/self/clear_refs or VmHWM unavailable";
  EXPECT_LT(after - before, 16u * 1024) << "KiB of peak growth";
#else
  (void)measured;
#endif
  EXPECT_LE(r.peakLiveIds, 3u);
  using IntSorter = tt::ExternalSorter<int, std::less<int>>;
  EXPECT_GT(r.sortRuns, IntSorter::kFanIn);

  // Actual: each freed object 16 x 32, object N-2 16 x 16 (live to the end), N-1 nothing.
  // Ideal: only the odd freed objects, 16 x 32 each, (N-2)/2 of them. Samples after malloc k
  // hold k-2, k-1, k (48 bytes) and, ideally, k and whichever of k-1, k-2 is odd (32).
  EXPECT_EQ(r.objectCount, kN);
  EXPECT_EQ(r.events, 2 * kN - 2);
  EXPECT_EQ(r.finalClock, 16 * kN);
  EXPECT_EQ(r.actualArea, static_cast<double>((kN - 2) * 512 + 256));
  EXPECT_EQ(r.idealArea, static_cast<double>((kN - 2) / 2 * 512));
  EXPECT_EQ(r.peakActual, 48u);
  EXPECT_EQ(r.peakIdeal, 32u);
  EXPECT_EQ(r.increasePercent, 50.0);
  EXPECT_EQ(r.uncoveredObjects, 0u);
  EXPECT_EQ(r.releaseMismatches, 0u);
  // Early releases: the even freed objects ((N-2)/2, their own free dropped) and the two
  // live at the end; an odd object is already freed right after its last use.
  EXPECT_EQ(c.earlyReleases, (kN - 2) / 2 + 2);
  EXPECT_EQ(c.droppedReleases, (kN - 2) / 2);
  EXPECT_EQ(c.events, 2 * kN - 2 + 2);

  // Everything sorted in one run: the same figures.
  dg::DragOptions one;
  one.tempDir = dir.path().string();
  one.sortRunRecords = kN + 1;
  const dg::DragResult o = dg::analyzeDrag(trace, lu, one);
  EXPECT_EQ(o.sortRuns, 0u);
  EXPECT_EQ(o.actualArea, r.actualArea);
  EXPECT_EQ(o.idealArea, r.idealArea);
  EXPECT_EQ(o.drag, r.drag);
  EXPECT_EQ(o.curve, r.curve);
  EXPECT_EQ(o.samples, r.samples);
  // No temporary file is left: the trace, its last-use file and the ideal trace only.
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 3u);
}

struct Less {
  bool operator()(std::uint64_t a, std::uint64_t b) const { return a < b; }
};

TEST(DragBounded, TheExternalSortMergesManyRuns) {
  TempDir dir;
  for (const std::size_t run : {std::size_t{7}, std::size_t{1000}, std::size_t{5000}}) {
    tt::ExternalSorter<std::uint64_t, Less> s(dir.path().string(), run);
    std::vector<std::uint64_t> want;
    for (std::uint64_t i = 0; i < 3000; ++i) {
      const std::uint64_t v = (i * 2654435761u) % 1000;  // repeats, out of order
      s.push(v);
      want.push_back(v);
    }
    s.finish();
    std::sort(want.begin(), want.end());
    std::vector<std::uint64_t> got;
    for (std::uint64_t v; s.next(v);) got.push_back(v);
    EXPECT_EQ(got, want) << "runs of " << run;
    EXPECT_EQ(s.runsWritten(), run >= 3000 ? 0u : (3000 + run - 1) / run);
  }
  // The temporary files are gone already (unlinked when made).
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 0u);
}

}  // namespace
