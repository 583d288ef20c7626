// The live runs' RSS sampler (toolkit/support/rss_sampler.hpp, through runChild's
// ChildSpec::rssSamples): a child that touches 200 MiB, frees them and sleeps is seen at about
// 200 MiB and lower at the end; a grandchild that allocates is counted; strata-exec's runs are
// sampled too; stdout is still captured; the rate halves when the samples are full; a process
// that is gone counts as 0.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "support/process.hpp"
#include "support/rss_sampler.hpp"

namespace {

using strata::support::ChildSpec;
using strata::support::ProcessResult;
using strata::support::RssSample;
using strata::support::RssSampler;

constexpr double kMiB = 1024.0 * 1024.0;

std::uint64_t maxRss(const std::vector<RssSample>& samples) {
  std::uint64_t m = 0;
  for (const RssSample& s : samples) m = std::max(m, s.rssBytes);
  return m;
}

// Runs the test program with `args`, sampled; expects it to succeed.
std::vector<RssSample> sampledRun(std::vector<std::string> args, bool ownPeakRss = false,
                                  ProcessResult* result = nullptr) {
  std::vector<RssSample> samples;
  ChildSpec spec;
  spec.argv = {STRATA_RSS_PROGRAM};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.ownPeakRss = ownPeakRss;
  spec.rssSamples = &samples;
  const ProcessResult r = strata::support::runChild(spec);
  EXPECT_TRUE(r.succeeded()) << strata::support::describeStatus(r);
  if (result != nullptr) *result = r;
  return samples;
}

// The samples' maximum is 200 MiB within 20%, and the last one (after the free) is far lower.
void expectHeldAndFreed(const std::vector<RssSample>& samples) {
  ASSERT_GT(samples.size(), 20u);  // 800 ms at 10 ms
  const double peak = static_cast<double>(maxRss(samples)) / kMiB;
  EXPECT_GT(peak, 200 * 0.8);
  EXPECT_LT(peak, 200 * 1.2);
  EXPECT_LT(static_cast<double>(samples.back().rssBytes) / kMiB, peak / 2);
  for (std::size_t i = 1; i < samples.size(); ++i)
    EXPECT_GT(samples[i].seconds, samples[i - 1].seconds);
}

TEST(RssSampler, SeesAChildHoldAndFreeMemory) {
  ProcessResult r;
  const std::vector<RssSample> samples = sampledRun({"alloc", "200"}, false, &r);
  expectHeldAndFreed(samples);
  // The samples span the run, 10 ms apart at first.
  EXPECT_GT(samples.back().seconds, 0.6);
  EXPECT_LE(samples.back().seconds, r.wallSeconds);
  std::vector<double> gaps;
  for (std::size_t i = 1; i < samples.size(); ++i)
    gaps.push_back(samples[i].seconds - samples[i - 1].seconds);
  std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
  EXPECT_NEAR(gaps[gaps.size() / 2], RssSampler::kFirstInterval, 0.004);
  // wait4's resource usage is as without sampling.
  EXPECT_GT(static_cast<double>(r.maxRssBytes) / kMiB, 200 * 0.8);
}

TEST(RssSampler, CountsAGrandchild) {
  expectHeldAndFreed(sampledRun({"fork", "200"}));
}

TEST(RssSampler, SamplesARunFromStrataExec) {
  ASSERT_EQ(::setenv("STRATA_EXEC", STRATA_EXEC_PATH, 1), 0);
  ProcessResult r;
  const std::vector<RssSample> samples = sampledRun({"alloc", "200"}, true, &r);
  ::unsetenv("STRATA_EXEC");
  EXPECT_TRUE(r.ownPeakRss);
  expectHeldAndFreed(samples);
}

TEST(RssSampler, StdoutIsStillCaptured) {
  std::vector<RssSample> samples;
  ChildSpec spec;
  spec.argv = {"/bin/sh", "-c", "echo one; sleep 0.1; echo two"};
  spec.captureStdout = true;
  spec.rssSamples = &samples;
  const ProcessResult r = strata::support::runChild(spec);
  EXPECT_TRUE(r.succeeded());
  EXPECT_EQ(r.out, "one\ntwo\n");
  EXPECT_GE(samples.size(), 5u);
  EXPECT_GT(maxRss(samples), 0u);
}

TEST(RssSampler, HalvesTheRateWhenFull) {
  // A minute on a simulated clock, 1 ms steps, a sample whenever one is due.
  RssSampler sampler(::getpid(), true, 0);
  std::uint64_t taken = 0;
  for (int ms = 0; ms <= 60000; ++ms) {
    const double now = ms * 0.001;
    if (now >= sampler.due()) sampler.record(now, ++taken);
  }
  const std::vector<RssSample>& s = sampler.samples();
  EXPECT_GT(taken, RssSampler::kMaxSamples);
  EXPECT_LE(s.size(), RssSampler::kMaxSamples);
  EXPECT_GE(s.size(), RssSampler::kMaxSamples / 2);
  // 2,000 samples fill at 20 s (10 ms) and again at 40 s (20 ms): 40 ms apart at the end.
  EXPECT_DOUBLE_EQ(sampler.interval(), 4 * RssSampler::kFirstInterval);
  EXPECT_DOUBLE_EQ(s.front().seconds, 0);
  EXPECT_GT(s.back().seconds, 59.9);
  for (std::size_t i = 1; i < s.size(); ++i)
    EXPECT_NEAR(s[i].seconds - s[i - 1].seconds, 0.040, 0.0015) << i;
}

TEST(RssSampler, AProcessThatIsGoneCountsAsZero) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_EQ(strata::support::processTreeRssBytes(child), 0u);
  // This process is there, and counts only with includeRoot.
  EXPECT_GT(strata::support::processTreeRssBytes(::getpid()), 0u);
  EXPECT_EQ(strata::support::processTreeRssBytes(::getpid(), false), 0u);
}

}  // namespace
