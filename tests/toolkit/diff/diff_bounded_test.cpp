// `strata diff` of two traces keeps memory by what is live, not by what was ever allocated:
// on the long-running workload (the same 4,096 objects live at every size), ten times the
// objects must not raise its peak resident size by more than a few MiB. Its figures by site
// kept a record per object ever allocated (32 bytes, for each of the two traces): about 100
// MiB here. Not in a sanitizer build, whose quarantine and shadow grow with what is freed.
#include <gtest/gtest.h>

#include <string>

#include "common/process.hpp"

namespace {

using strata::test::RunResult;
using strata::test::TempDir;

// The peak resident size (KiB) of `strata diff` of the steady workload at `size` with itself.
long diffPeakKiB(const TempDir& dir, const std::string& size) {
  const std::string trace = dir / ("steady-" + size + ".trace");
  const RunResult g = strata::test::runProgram(
      STRATA_CLI_PATH, {"generate", "steady", "--size", size, "-o", trace});
  EXPECT_EQ(g.exitCode(), 0) << g.err;
  const RunResult d = strata::test::runProgram(STRATA_CLI_PATH, {"diff", trace, trace});
  EXPECT_EQ(d.exitCode(), 0) << d.err;
  return d.maxRssKiB;
}

TEST(DiffBounded, PeakMemoryDoesNotGrowWithTheNumberOfObjectsAtAFixedLiveSet) {
  TempDir dir;
  const long shortRun = diffPeakKiB(dir, "0.3");  // 150,000 objects
  const long longRun = diffPeakKiB(dir, "3");     // 1.5 million objects
  RecordProperty("short_kib", std::to_string(shortRun));
  RecordProperty("long_kib", std::to_string(longRun));
  EXPECT_GT(shortRun, 0);
  EXPECT_LT(longRun - shortRun, 4 * 1024) << "short " << shortRun << " KiB, long " << longRun
                                          << " KiB";
}

}  // namespace
