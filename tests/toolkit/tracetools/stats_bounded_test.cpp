// `strata stats` keeps memory by what is live, not by what was ever allocated: on the
// long-running workload (the same 4,096 objects live at every size), ten times the events
// (ten times the objects) must not raise its peak resident size by more than a few MiB. A
// table per object id ever allocated would add about 64 bytes an object: about 90 MiB here.
// Not in a sanitizer build, whose quarantine and shadow grow with what is freed.
#include <gtest/gtest.h>

#include <string>

#include "common/peak_memory.hpp"

namespace {

using strata::test::RunResult;
using strata::test::TempDir;

// The peak resident size (KiB) of `strata stats` on the steady workload at `size`.
long statsPeakKiB(const TempDir& dir, const std::string& size) {
  const std::string trace = strata::test::steadyTrace(STRATA_CLI_PATH, dir, size);
  const RunResult s = strata::test::runProgram(STRATA_CLI_PATH, {"stats", trace});
  EXPECT_EQ(s.exitCode(), 0) << s.err;
  EXPECT_NE(s.out.find("max live objects           4,097"), std::string::npos) << s.out;
  return s.maxRssKiB;
}

TEST(StatsBounded, PeakMemoryDoesNotGrowWithTheNumberOfObjectsAtAFixedLiveSet) {
  strata::test::expectBoundedOnSteady(statsPeakKiB);
}

}  // namespace
