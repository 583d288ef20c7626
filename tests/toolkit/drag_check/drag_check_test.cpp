// `strata drag` end to end on the reaps paper's situations (drag_check_program.c): the built
// CLI runs each under Valgrind with the drag tool and the recorder, and the figures are checked
// against answers worked out by hand. Allocation time: clock(e) = bytes requested by the creating
// events up to and including e. An object made at clock c, last used after the allocation at
// clock u and ended at clock f adds size x (f - c) to the area as run and size x (u - c) to
// the area had it been freed at its last use; drag is the ratio of the two sums.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "../cli/strata_cli.hpp"
#include "drag/drag_analysis.hpp"
#include "drag/drag_last_use.hpp"
#include "strata/trace/reader.hpp"

namespace {

using strata::test::contains;
using strata::test::runStrata;
using strata::test::slurp;
using strata::test::TempDir;
namespace tt = strata::tracetools;
namespace dg = strata::drag;

struct Drag {
  strata::test::RunResult run;
  dg::DragResult result;
  dg::LastUseData lastUse;
  std::string report;
};

// Runs `strata drag -o DIR -- drag_check_program MODE` and analyses what it wrote.
Drag dragOf(const TempDir& dir, const std::string& mode) {
  Drag d;
  d.run = runStrata({"drag", "-o", dir / "out", "--", DRAG_PROGRAM, mode});
  d.report = slurp(dir / "out/report.txt");
  if (d.run.exitCode() != 0) return d;
  // One process: one last-use file, last-use.<pid>.bin.
  std::string lastUse;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path() / "out"))
    if (entry.path().filename().string().starts_with("last-use.")) lastUse = entry.path();
  d.lastUse = dg::readLastUseFile(lastUse);
  d.result = dg::analyzeDrag(dir / "out/program.trace", d.lastUse);
  return d;
}

// A window of 4 objects of 64 B, each last used right before its free: every object's
// lifetime is the same both ways, so drag is exactly 1 and the peaks are equal (4 x 64).
TEST(DragCheck, PromptFreeingHasNoDrag) {
  TempDir dir;
  const Drag d = dragOf(dir, "prompt");
  ASSERT_EQ(d.run.exitCode(), 0) << d.run.err;
  EXPECT_TRUE(d.lastUse.complete);
  EXPECT_EQ(d.result.objectCount, 100u);
  EXPECT_EQ(d.result.finalClock, 6400u);
  EXPECT_EQ(d.result.uncoveredObjects, 0u);
  EXPECT_DOUBLE_EQ(d.result.actualArea, d.result.idealArea);
  EXPECT_DOUBLE_EQ(d.result.drag, 1.0);
  EXPECT_EQ(d.result.peakActual, 256u);
  EXPECT_EQ(d.result.peakIdeal, 256u);
  EXPECT_TRUE(contains(d.run.out, "total drag         1.000")) << d.run.out;
  EXPECT_TRUE(contains(d.run.out, "increase           0.0%")) << d.run.out;
}

// A region of 100 objects of 100 B destroyed at the end (clock 10,000). Object j (made at
// clock 100(j+1)) is used after the next allocation, clock 100(j+2), except the last, used
// only when made. As run: sum over j of 100 x (10,000 - 100(j+1)) = 100 x 100 x 4,950 =
// 49,500,000. Freed at last use: 99 objects x 100 x 100 = 990,000. Drag 50. Peaks: all 100
// objects (10,000 B) at the end, against two (200 B) at any allocation: +4,900%.
TEST(DragCheck, ARegionKeepsDeadObjectsUntilItIsDestroyed) {
  TempDir dir;
  const Drag d = dragOf(dir, "region");
  ASSERT_EQ(d.run.exitCode(), 0) << d.run.err;
  EXPECT_EQ(d.result.objectCount, 100u);
  EXPECT_DOUBLE_EQ(d.result.actualArea, 49'500'000.0);
  EXPECT_DOUBLE_EQ(d.result.idealArea, 990'000.0);
  EXPECT_DOUBLE_EQ(d.result.drag, 50.0);
  EXPECT_EQ(d.result.peakActual, 10'000u);
  EXPECT_EQ(d.result.peakIdeal, 200u);
  EXPECT_DOUBLE_EQ(d.result.increasePercent, 4900.0);
  EXPECT_TRUE(contains(d.run.out, "total drag         50.000")) << d.run.out;
  // The ideal trace reads back whole and frees what the region held, object by object.
  strata::trace::TraceReader<strata::trace::FdSource> ideal(
      strata::trace::FdSource{::open((dir / "out/ideal.trace").c_str(), O_RDONLY)});
  strata::trace::Event e;
  std::uint64_t frees = 0;
  strata::trace::ReadStatus s;
  while ((s = ideal.next(e)) == strata::trace::ReadStatus::Event)
    frees += e.op == strata::trace::Op::ReapFree;
  EXPECT_EQ(s, strata::trace::ReadStatus::End) << ideal.error().message();
  EXPECT_TRUE(ideal.complete());
  EXPECT_EQ(frees, 100u);
  EXPECT_TRUE(std::filesystem::exists(dir / "out/curves.csv"));
}

// A reap alive for the whole run, cleared after each of 5 phases of 20 objects of 50 B (each
// phase: 1,000 B). Within a phase, object i is made at 50(i+1) after the phase's start and
// ends at the clear (1,000 after it): sum over i of 50 x 50 x (19 - i) = 2,500 x 190 =
// 475,000 a phase, 2,375,000 in all. Freed at last use (after the next allocation): 19 x 50 x
// 50 = 47,500 a phase, 237,500 in all. Drag 10; peaks 1,000 B and 100 B: +900%.
TEST(DragCheck, ALongLivedReapWhoseObjectsDieEarly) {
  TempDir dir;
  const Drag d = dragOf(dir, "phases");
  ASSERT_EQ(d.run.exitCode(), 0) << d.run.err;
  EXPECT_EQ(d.result.objectCount, 100u);
  EXPECT_DOUBLE_EQ(d.result.actualArea, 2'375'000.0);
  EXPECT_DOUBLE_EQ(d.result.idealArea, 237'500.0);
  EXPECT_DOUBLE_EQ(d.result.drag, 10.0);
  EXPECT_EQ(d.result.peakActual, 1'000u);
  EXPECT_EQ(d.result.peakIdeal, 100u);
  EXPECT_DOUBLE_EQ(d.result.increasePercent, 900.0);
}

// The reap C API as a region with some frees: 40 objects of 128 B (clock 5,120 at the end);
// object j is used after the next allocation; the even ones are reap_free'd right then, the
// odd ones stay to the reap_clear at the end. As run: even j, 20 x 128 x 128; odd j, 128 x
// 128 x (39 - j) summed over j = 1, 3, ..., 39: 128 x 128 x 380. In all 128 x 128 x 400 =
// 6,553,600. Freed at last use: 39 objects x 128 x 128 (the last one is used only when made)
// = 638,976. Drag 400/39. Peaks: at the 40th allocation the 20 odd objects live (19 x 128
// kept, and the 39th) plus the new one... worked out: the odd objects 1..37 (19), object 38
// (freed after this allocation) and object 39: 21 x 128 = 2,688; freed at last use: two
// objects, 256 B.
TEST(DragCheck, AReapUsedAsARegionWithSomeFrees) {
  TempDir dir;
  const Drag d = dragOf(dir, "reap");
  ASSERT_EQ(d.run.exitCode(), 0) << d.run.err;
  EXPECT_EQ(d.result.objectCount, 40u);
  EXPECT_DOUBLE_EQ(d.result.actualArea, 6'553'600.0);
  EXPECT_DOUBLE_EQ(d.result.idealArea, 638'976.0);
  EXPECT_NEAR(d.result.drag, 400.0 / 39.0, 1e-12);
  EXPECT_EQ(d.result.peakActual, 2'688u);
  EXPECT_EQ(d.result.peakIdeal, 256u);
}

// An obstack (Strata's GNU-compatible API): 3 groups of 10 objects of 100 B, each group
// freed back past its first object when done (clock 1,000 after the group's start). Object i
// of a group lives 100 x (9 - i) as run: 100 x 100 x 45 = 450,000 a group, 1,350,000 in all;
// freed at last use (after the next allocation; the last of a group only when made): 9 x 100
// x 100 = 90,000 a group, 270,000 in all. Drag 5; peaks 1,000 B and 200 B: +400%.
TEST(DragCheck, AnObstackFreedBackPastItsObjects) {
  TempDir dir;
  const Drag d = dragOf(dir, "obstack");
  ASSERT_EQ(d.run.exitCode(), 0) << d.run.err;
  EXPECT_EQ(d.result.objectCount, 30u);
  EXPECT_DOUBLE_EQ(d.result.actualArea, 1'350'000.0);
  EXPECT_DOUBLE_EQ(d.result.idealArea, 270'000.0);
  EXPECT_DOUBLE_EQ(d.result.drag, 5.0);
  EXPECT_EQ(d.result.peakActual, 1'000u);
  EXPECT_EQ(d.result.peakIdeal, 200u);
  EXPECT_DOUBLE_EQ(d.result.increasePercent, 400.0);
}

// A crash before the region is destroyed: the analysis covers the run up to the crash (the
// objects live then end with the trace) and says so; the tool's records are there.
TEST(DragCheck, ACrashIsAnalysedUpToWhereItHappened) {
  TempDir dir;
  const Drag d = dragOf(dir, "crash");
  ASSERT_EQ(d.run.exitCode(), 0) << d.run.err;
  EXPECT_TRUE(contains(d.run.out, "SIGSEGV")) << d.run.out;
  EXPECT_TRUE(contains(d.run.out, "did not finish normally")) << d.run.out;
  EXPECT_EQ(d.result.objectCount, 100u);
  EXPECT_DOUBLE_EQ(d.result.actualArea, 49'500'000.0);
  EXPECT_DOUBLE_EQ(d.result.idealArea, 990'000.0);
}

// Nothing allocated: an error, not a table of zeros.
TEST(DragCheck, AProgramThatAllocatesNothingIsAnError) {
  TempDir dir;
  const Drag d = dragOf(dir, "none");
  EXPECT_EQ(d.run.exitCode(), 1);
  EXPECT_TRUE(contains(d.run.err, "allocated nothing")) << d.run.err;
}

// Without Valgrind in PATH: a clear message naming the package, exit 2.
TEST(DragCheck, WithoutValgrindTheMessageNamesThePackage) {
  TempDir dir;
  const strata::test::RunResult r =
      runStrata({"drag", "-o", dir / "out", "--", DRAG_PROGRAM, "prompt"},
                {{"PATH", dir.path().string()}, {"VALGRIND_LIB", std::nullopt}});
  EXPECT_EQ(r.exitCode(), 2);
  EXPECT_TRUE(contains(r.err, "Debian package: valgrind")) << r.err;
}

TEST(DragCheck, BadInvocationsAreUsageErrors) {
  EXPECT_EQ(runStrata({"drag"}).exitCode(), 2);
  EXPECT_EQ(runStrata({"drag", "--top", "0", "--", "true"}).exitCode(), 2);
  EXPECT_EQ(runStrata({"drag", "--", "/no/such/program"}).exitCode(), 127);
}

}  // namespace
