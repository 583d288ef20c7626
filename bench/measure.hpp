// The measurement machinery the table benchmarks share (gp_table, region_table): every run
// in a fork()ed child that reports a RunResult through a pipe, and the kernel's view of the
// child's memory (exact resident size, peak resident size and its reset, file mappings made
// resident before the baseline).
//
// The usual shape of one measured run, in the child:
//
//   warm up the allocator (code faulted in, one-off set-up done)
//   populateFileMappings();           // code first run later is not counted as memory
//   resetPeakRss();                   // VmHWM starts again from here
//   const std::size_t before = exactRss();
//   ... start the clock, run, stop the clock ...
//   result.rss = peakDelta(before);   // how far the resident set rose during the run
//
// Linux only (/proc, clear_refs, MADV_POPULATE_READ).
#pragma once
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "support/proc.hpp"

namespace strata::bench {

using Clock = std::chrono::steady_clock;

// What one child reports back through its pipe.
struct RunResult {
  bool ok = false;
  double ms = 0;
  std::size_t held = 0;        // bytes; 0 when not measured
  std::size_t rss = 0;         // bytes
  std::size_t failures = 0;    // allocations that returned nullptr
};

// The peak resident set since resetPeakRss(), from the kernel's counter. These read /proc
// through the shared, non-allocating readers (toolkit/support/proc.hpp).
inline std::size_t peakRss() { return support::procFieldBytes("/proc/self/status", "VmHWM:"); }

// The resident set now, exactly: smaps_rollup walks the page tables. (VmRSS and VmHWM come
// from per-CPU counters that can lag by a few hundred KiB just after fork(), so they make a
// poor baseline; by the end of a run they have caught up.)
inline std::size_t exactRss() { return support::procFieldBytes("/proc/self/smaps_rollup", "Rss:"); }

// Makes VmHWM (peak RSS) start again from the current RSS (Linux >= 4.0).
inline bool resetPeakRss() { return support::resetPeakRss(); }

// Maps every page of the program's and libraries' files into the page tables now, so that
// code first run during the measurement (fault-around maps 64 KiB per first touch) is not
// counted as the allocator's memory. Best effort: needs MADV_POPULATE_READ (Linux 5.14).
inline void populateFileMappings() {
  char buf[32768];
  const int fd = ::open("/proc/self/maps", O_RDONLY);
  if (fd < 0) return;
  std::size_t len = 0;
  while (len < sizeof buf - 1) {
    const ssize_t got = ::read(fd, buf + len, sizeof buf - 1 - len);
    if (got <= 0) break;
    len += static_cast<std::size_t>(got);
  }
  ::close(fd);
  buf[len] = '\0';
  for (char* line = buf; *line != '\0';) {
    char* end = std::strchr(line, '\n');
    if (end != nullptr) *end = '\0';
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line, "%lx-%lx", &lo, &hi) == 2 && std::strchr(line, '/') != nullptr &&
        std::strstr(line, " r") != nullptr) {
#ifdef MADV_POPULATE_READ
      ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_POPULATE_READ);
#endif
    }
    if (end == nullptr) break;
    line = end + 1;
  }
}

// How far the peak resident set rose above `before` (0 if it did not).
inline std::size_t peakDelta(std::size_t before) {
  const std::size_t peak = peakRss();
  return peak > before ? peak - before : 0;
}

// A table of n pointers of its own, mapped and touched before the baseline, so that writing
// it is not counted as the allocator's memory. Never unmapped: the child exits.
inline void** freshSlots(std::size_t n) {
  const std::size_t bytes = std::max<std::size_t>(n, 1) * sizeof(void*);
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  std::memset(p, 0, bytes);
  return static_cast<void**>(p);
}

// Runs `body` in a fork()ed child and returns what it wrote to the pipe; ok = false when
// the child died (a crash in one allocator must not take the table down).
inline RunResult inChild(const std::function<RunResult()>& body) {
  int fds[2];
  if (::pipe(fds) != 0) return {};
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return {};
  }
  if (pid == 0) {
    ::close(fds[0]);
    const RunResult r = body();
    const bool written = ::write(fds[1], &r, sizeof r) == static_cast<ssize_t>(sizeof r);
    ::_exit(written ? 0 : 1);
  }
  ::close(fds[1]);
  RunResult r;
  const ssize_t got = ::read(fds[0], &r, sizeof r);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (got != static_cast<ssize_t>(sizeof r) || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return {};
  return r;
}

// The median of a non-empty sample.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// The median of the per-round ratios a[k] / base[k], over the rounds where both ran (a value
// <= 0 marks a round that failed or did not run); 0 if there is none. Comparing within each
// round, rather than median to median, cancels a change of load on the machine between rounds.
inline double pairedRatio(const std::vector<double>& a, const std::vector<double>& base) {
  std::vector<double> r;
  for (std::size_t k = 0; k < a.size() && k < base.size(); ++k)
    if (a[k] > 0 && base[k] > 0) r.push_back(a[k] / base[k]);
  return r.empty() ? 0.0 : median(r);
}

}  // namespace strata::bench
