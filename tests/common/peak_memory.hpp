// What the tests that a command's memory is bounded by what is live share: the peak resident
// size of a run of the `strata` command (the largest of it and the children it waits for, the
// replayers among them), the steady workload generated at a size, and the check that ten
// times the objects at the same live set add no more than a few MiB. Those tests do not run
// in a sanitizer build, whose quarantine and shadow grow with what is freed.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/process.hpp"

namespace strata::test {

// The peak resident size (KiB) of `cli ARGS...`, which must succeed.
inline long peakKiB(const std::string& cli, const std::vector<std::string>& args) {
  const RunResult r = runProgram(cli, args);
  EXPECT_EQ(r.exitCode(), 0) << r.err;
  return r.maxRssKiB;
}

// The steady workload (4,096 objects live at every size) at `size` million events in dir.
inline std::string steadyTrace(const std::string& cli, const TempDir& dir, const std::string& size) {
  const std::string trace = dir / ("steady-" + size + ".trace");
  const RunResult g = runProgram(cli, {"generate", "steady", "--size", size, "-o", trace});
  EXPECT_EQ(g.exitCode(), 0) << g.err;
  return trace;
}

// The short and the long run's peaks (KiB): the long one, ten times the objects at the same
// live set, within 4 MiB of the short one. A record per object ever allocated grows by tens
// to hundreds of MiB between the lengths these tests use.
inline void expectBounded(long shortRun, long longRun) {
  ::testing::Test::RecordProperty("short_kib", std::to_string(shortRun));
  ::testing::Test::RecordProperty("long_kib", std::to_string(longRun));
  EXPECT_GT(shortRun, 0);
  EXPECT_LT(longRun - shortRun, 4 * 1024) << "short " << shortRun << " KiB, long " << longRun
                                          << " KiB";
}

// The check above on the steady workload at 0.3 and 3 million events (150,000 and 1.5 million
// objects, the same 4,096 live): peakAt(dir, size) runs a command on it and gives its peak.
template <class PeakAt>
void expectBoundedOnSteady(PeakAt peakAt) {
  TempDir dir;
  const long shortRun = peakAt(dir, std::string("0.3"));
  const long longRun = peakAt(dir, std::string("3"));
  expectBounded(shortRun, longRun);
}

}  // namespace strata::test
