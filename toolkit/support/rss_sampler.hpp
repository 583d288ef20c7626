// The resident size of a process and every process it started, sampled from /proc over time
// while the process runs (ChildSpec::rssSamples in process.hpp: `strata compare`'s live RSS
// curves). Processes come and go between two reads of /proc: one that vanished counts as 0,
// never as an error.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

struct rusage;

namespace strata::support {

// One sample: seconds since the child started, and the resident bytes of its processes summed.
struct RssSample {
  double seconds = 0;
  std::uint64_t rssBytes = 0;
};

// The resident bytes (/proc/<pid>/statm) of `root` and all its descendants, found through
// /proc/<pid>/task/<tid>/children, or where the kernel has no such file by every process's
// parent in /proc/<pid>/stat. Without `includeRoot`, only the descendants (the root is a
// launcher such as strata-exec). 0 when none of them is there any more.
std::uint64_t processTreeRssBytes(int root, bool includeRoot = true);

// Samples at a rate that halves as samples pile up: every 10 ms at first, and whenever
// kMaxSamples are held every other one is dropped and the interval doubles, so a run of any
// length keeps at most kMaxSamples evenly spaced samples.
class RssSampler {
 public:
  static constexpr std::size_t kMaxSamples = 2000;
  static constexpr double kFirstInterval = 0.010;

  // `start`: the child's start on the monotonic clock, in seconds.
  RssSampler(int root, bool includeRoot, double start);
  // When the next sample is due (monotonic seconds).
  double due() const { return due_; }
  double interval() const { return interval_; }
  // Takes a sample at monotonic time `now` and sets the next due time.
  void sample(double now);
  // Keeps `bytes` as the sample at `now` as sample() does (halving the rate when full) and
  // sets the next due time: sample() without /proc, for the tests.
  void record(double now, std::uint64_t bytes);
  const std::vector<RssSample>& samples() const { return samples_; }
  std::vector<RssSample> take() { return std::move(samples_); }

 private:
  int root_;
  bool includeRoot_;
  double start_;
  double interval_ = kFirstInterval;
  double due_;
  std::vector<RssSample> samples_;
};

// Waits for the child `pid` as wait4 does (its status and resource usage, the child reaped)
// while `sampler` samples it when due, and reads `outFd` (when >= 0: the child's stdout) into
// `out` to its end meanwhile, closing it. The child's end is seen at once where the kernel
// has pidfd_open, else within 10 ms.
void waitSampling(int pid, int outFd, std::string& out, RssSampler& sampler, int& status,
                  struct rusage& usage);

}  // namespace strata::support
