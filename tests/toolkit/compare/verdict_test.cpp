// compare's verdict over processes and its agreement with the live runs (compare_verdict.cpp),
// on hand-made figures: Spearman's rank correlation, the combined verdict (time summed, the
// largest peak heap), and which differences from the reference count as disagreements.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "compare/compare_steps.hpp"

namespace {

using namespace strata::compare;
using strata::compare::combineProcesses;
using strata::compare::computeAgreement;
using strata::compare::spearman;

constexpr double kMiB = 1024.0 * 1024.0;

TEST(CompareVerdict, SpearmanRanksWithTies) {
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {9, 7, 5, 1}), -1.0);
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3}, {1, 100, 2}), 0.5);
  // Ties share their average rank: x ranks (1.5, 1.5, 3), y ranks (1, 2, 3).
  EXPECT_NEAR(spearman({5, 5, 9}, {1, 2, 3}), 0.8660254, 1e-6);
  EXPECT_TRUE(std::isnan(spearman({1, 2}, {1, 2}))) << "fewer than three";
  EXPECT_TRUE(std::isnan(spearman({3, 3, 3}, {1, 2, 3}))) << "no variation";
}

// A replay row of one allocator: ok, with this time and peak heap.
AllocatorRow row(const std::string& allocator, double seconds, std::uint64_t heap) {
  AllocatorRow r;
  r.allocator = allocator;
  r.median.allocator = allocator;
  r.median.status = strata::replay::ReplayStatus::Ok;
  r.median.wallSeconds = seconds;
  r.median.peakHeapBytes = heap;
  return r;
}

LiveRow live(const std::string& allocator, double seconds, std::uint64_t rss) {
  LiveRow r;
  r.allocator = allocator;
  r.status = LiveStatus::Ok;
  r.wallSeconds = seconds;
  r.maxRssBytes = rss;
  r.wallRuns = {seconds};
  return r;
}

TEST(CompareVerdict, CombinedSumsTimeAndTakesTheLargestHeap) {
  std::vector<TraceReport> traces(2);
  traces[0].rows = {row("glibc", 1.0, 10), row("jemalloc", 0.5, 30)};
  traces[1].rows = {row("glibc", 1.0, 50), row("jemalloc", 0.9, 20)};
  CommandReport c;
  combineProcesses(traces, c);
  ASSERT_EQ(c.combined.size(), 2u);
  EXPECT_DOUBLE_EQ(c.combined[0].seconds, 2.0);
  EXPECT_EQ(c.combined[0].peakHeapBytes, 50u);
  EXPECT_DOUBLE_EQ(c.combined[1].seconds, 1.4);
  EXPECT_EQ(c.combined[1].peakHeapBytes, 30u);
  EXPECT_EQ(c.fastest, "jemalloc");
  EXPECT_EQ(c.smallest, "jemalloc");
  // An allocator that failed on one process is out of the verdict.
  traces[1].rows[1].median.status = strata::replay::ReplayStatus::Crashed;
  combineProcesses(traces, c);
  EXPECT_FALSE(c.combined[1].finished);
  EXPECT_EQ(c.fastest, "glibc");
}

TEST(CompareVerdict, AgreementFlagsDifferencesBeyondTheSlack) {
  std::vector<TraceReport> traces(1);
  traces[0].rows = {row("glibc", 1.0, 10 * kMiB), row("jemalloc", 2.0, 12 * kMiB),
                    row("mimalloc", 3.0, 30 * kMiB)};
  CommandReport c;
  combineProcesses(traces, c);
  c.haveLive = true;
  c.live.reference = "glibc";
  // Live RSS: glibc 40 MiB, jemalloc +3 MiB (predicted +2: within 2 MiB, the larger of that
  // and 10 % of the live difference), mimalloc +1 MiB (predicted +20: off by 19 MiB).
  c.live.rows = {live("glibc", 1.0, 40 * kMiB), live("jemalloc", 2.0, 43 * kMiB),
                 live("mimalloc", 3.0, 41 * kMiB)};
  computeAgreement(c);
  const Agreement& a = c.agreement;
  ASSERT_TRUE(a.computed);
  EXPECT_EQ(a.allocators, 3u);
  EXPECT_DOUBLE_EQ(a.timeRankCorrelation, 1.0);
  EXPECT_DOUBLE_EQ(a.heapRankCorrelation, 0.5);
  ASSERT_EQ(a.differences.size(), 2u);
  EXPECT_EQ(a.differences[0].allocator, "jemalloc");
  EXPECT_DOUBLE_EQ(a.differences[0].predictedHeapBytes, 2 * kMiB);
  EXPECT_DOUBLE_EQ(a.differences[0].liveRssBytes, 3 * kMiB);
  EXPECT_FALSE(a.differences[0].disagrees);
  EXPECT_TRUE(a.differences[1].disagrees);
  // One sentence for the heap ranking (0.5 < 0.9) and one for mimalloc; none for time.
  ASSERT_EQ(a.notes.size(), 2u);
  EXPECT_NE(a.notes[0].find("memory differently"), std::string::npos) << a.notes[0];
  EXPECT_EQ(a.notes[1].find("mimalloc:"), 0u) << a.notes[1];

  // An allocator whose live run failed is left out of the agreement.
  c.live.rows[2].status = LiveStatus::Failed;
  computeAgreement(c);
  EXPECT_EQ(c.agreement.allocators, 2u);
  EXPECT_TRUE(std::isnan(c.agreement.heapRankCorrelation));
  EXPECT_EQ(c.agreement.differences.size(), 1u);
}

}  // namespace

namespace {

// The allocator library's own resident pages count with the heap in the predicted RSS.
TEST(CompareVerdict, PredictedRssHoldsTheLibrarysOwnPages) {
  std::vector<TraceReport> traces(1);
  traces[0].rows = {row("glibc", 1.0, 10 * kMiB), row("jemalloc", 2.0, 10 * kMiB),
                    row("mimalloc", 3.0, 11 * kMiB)};
  traces[0].rows[1].median.libraryResidentBytes = 3 * kMiB;
  CommandReport c;
  combineProcesses(traces, c);
  EXPECT_EQ(c.combined[1].predictedRssBytes(), 13 * kMiB);
  c.haveLive = true;
  c.live.reference = "glibc";
  c.live.rows = {live("glibc", 1.0, 40 * kMiB), live("jemalloc", 2.0, 43 * kMiB),
                 live("mimalloc", 3.0, 41 * kMiB)};
  computeAgreement(c);
  ASSERT_EQ(c.agreement.differences.size(), 2u);
  EXPECT_DOUBLE_EQ(c.agreement.differences[0].predictedHeapBytes, 3 * kMiB);
  EXPECT_FALSE(c.agreement.differences[0].disagrees);
  EXPECT_DOUBLE_EQ(c.agreement.heapRankCorrelation, 1.0);
}

}  // namespace
