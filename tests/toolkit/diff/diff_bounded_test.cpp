// `strata diff` of two traces keeps memory by what is live, not by what was ever allocated:
// on the long-running workload (the same 4,096 objects live at every size), ten times the
// objects must not raise its peak resident size by more than a few MiB. Its figures by site
// kept a record per object ever allocated (32 bytes, for each of the two traces): about 100
// MiB here. Not in a sanitizer build, whose quarantine and shadow grow with what is freed.
#include <gtest/gtest.h>

#include <string>

#include "common/peak_memory.hpp"

namespace {

using strata::test::TempDir;

// The peak resident size (KiB) of `strata diff` of the steady workload at `size` with itself.
long diffPeakKiB(const TempDir& dir, const std::string& size) {
  const std::string trace = strata::test::steadyTrace(STRATA_CLI_PATH, dir, size);
  return strata::test::peakKiB(STRATA_CLI_PATH, {"diff", trace, trace});
}

TEST(DiffBounded, PeakMemoryDoesNotGrowWithTheNumberOfObjectsAtAFixedLiveSet) {
  strata::test::expectBoundedOnSteady(diffPeakKiB);
}

}  // namespace
