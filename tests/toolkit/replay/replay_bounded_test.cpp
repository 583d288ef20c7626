// `strata replay` and `strata compare` keep memory by what is live, not by what was ever
// allocated: on the long-running workload (the same 4,096 objects live at every size), ten
// times the objects must not raise their peak resident size (the command's and its
// replayers') by more than a few MiB. An object table, sizes and states per object id ever
// allocated (17 bytes an id, what the replayer kept before) add about 25 MiB here, and
// compare's statistics pass before it about 90. Not in a sanitizer build, whose quarantine
// and shadow grow with what is freed.
#include <gtest/gtest.h>

#include <string>

#include "common/peak_memory.hpp"

namespace {

using strata::test::TempDir;

// The peak (KiB) of `strata replay` of the steady workload at `size` (million events) on glibc.
long replayPeakKiB(const TempDir& dir, const std::string& size) {
  const std::string trace = strata::test::steadyTrace(STRATA_CLI_PATH, dir, size);
  return strata::test::peakKiB(STRATA_CLI_PATH, {"replay", trace, "--allocator", "glibc", "--no-write"});
}

// The peak (KiB) of `strata compare --runs 1` of the steady workload at `size` on glibc.
long comparePeakKiB(const TempDir& dir, const std::string& size) {
  const std::string trace = strata::test::steadyTrace(STRATA_CLI_PATH, dir, size);
  return strata::test::peakKiB(STRATA_CLI_PATH, {"compare", trace, "--allocators", "glibc", "--runs",
                                                 "1", "--no-plots", "--out", dir / ("compare-" + size)});
}

TEST(ReplayBounded, PeakMemoryDoesNotGrowWithTheNumberOfObjectsAtAFixedLiveSet) {
  strata::test::expectBoundedOnSteady(replayPeakKiB);
}

TEST(CompareBounded, PeakMemoryDoesNotGrowWithTheNumberOfObjectsAtAFixedLiveSet) {
  strata::test::expectBoundedOnSteady(comparePeakKiB);
}

}  // namespace
