// preload_table: whole allocators side by side by LD_PRELOAD — glibc, jemalloc, mimalloc,
// tcmalloc and Strata's libraries (those `strata allocators` finds) — on the workloads of
// preload_workload, 1 and 2 threads each: wall time and peak RSS, with ratios to glibc and
// to mimalloc, one table per workload and a summary of geometric means.
//
//   preload_table                   every workload, 5 runs each (a few minutes)
//   preload_table --quick           1/20 size, 3 runs (about 10 s)
//   preload_table --runs 9 --workload server --allocator strata   (plus glibc, mimalloc)
//
// Each run is a fresh process: preload_workload (beside this program) is fork()ed and
// execve()d with LD_PRELOAD set to the allocator's library (nothing preloaded for glibc).
// It times the workload itself (process start-up excluded) and says which object defines
// malloc, so a library that failed to preload is reported instead of being measured as
// glibc. The peak RSS is the child's ru_maxrss from wait4 (the whole process, start-up
// included: the same few MiB for everyone). In each round every allocator runs once, the
// first one rotating from round to round. Columns (see bench/README.md):
//   time ms     median wall time of the workload
//   /glibc      median over the rounds of time / glibc's time in the same round
//   /mimalloc   the same against mimalloc
//   RSS MiB     median peak resident set of the process
//   RSS/glibc   median over the rounds of RSS / glibc's RSS in the same round
// The summary gives, per allocator, the geometric mean of each ratio over the workloads.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "registry/allocator_registry.hpp"
#include "measure.hpp"
#include "preload_run.hpp"
#include "table_options.hpp"


namespace pt {

using strata::bench::median;
using strata::registry::Location;

using Workload = strata::bench::PreloadWorkload;

// What one child run gave.
struct Sample {
  bool ok = false;
  double ms = 0;
  double rss = 0;     // bytes
  std::string error;  // why it is not ok
};

// The last path component.
std::string_view baseName(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Runs preload_workload once under one allocator and reads its report and peak RSS.
Sample runOnce(const std::string& program, const Workload& w, double scale, const Location& a) {
  Sample s;
  std::vector<std::string> add;
  if (!a.path.empty()) add.push_back("LD_PRELOAD=" + a.path);
  const strata::support::ProcessResult run =
      strata::bench::runPreloadWorkload(program, w, scale, {"LD_PRELOAD"}, add);
  s.error = strata::bench::runFailure(run);
  if (!s.error.empty()) return s;
  const std::string& out = run.out;
  const std::size_t t = out.find("time_ms "), m = out.find("malloc ");
  if (t == std::string::npos || m == std::string::npos) {
    s.error = "no report";
    return s;
  }
  s.ms = std::strtod(out.c_str() + t + 8, nullptr);
  std::string from = out.substr(m + 7);
  from = from.substr(0, from.find('\n'));
  const bool preloaded = a.path.empty() ? baseName(from).starts_with("libc.so")
                                        : baseName(from) == baseName(a.path);
  if (!preloaded) {
    s.error = "malloc came from " + from;
    return s;
  }
  s.rss = static_cast<double>(run.maxRssBytes);
  s.ok = true;
  return s;
}

// One field of each round's sample, -1 for a round that failed (measure.hpp's pairedRatio
// leaves those out).
std::vector<double> perRound(const std::vector<Sample>& samples, double Sample::*field) {
  std::vector<double> v;
  for (const Sample& s : samples) v.push_back(s.ok ? s.*field : -1.0);
  return v;
}

// The median of the per-round ratios of `a` to `base` (rounds where both ran); 0 if none.
double pairedRatio(const std::vector<Sample>& a, const std::vector<Sample>& base,
                   double Sample::*field) {
  return strata::bench::pairedRatio(perRound(a, field), perRound(base, field));
}

// The geometric mean of the positive values (0 when there are none).
double geomean(const std::vector<double>& v) {
  double logSum = 0;
  int n = 0;
  for (double x : v)
    if (x > 0) {
      logSum += std::log(x);
      ++n;
    }
  return n == 0 ? 0.0 : std::exp(logSum / n);
}

const strata::bench::TableProgram kProgram{
    "preload_table", "preload_table [--quick] [--runs N] [--workload NAME] [--allocator NAME]",
    "churn server grow-shrink tiny (both thread counts), or one variant: churn-1t, tiny-2t, ...",
    "whole allocators by LD_PRELOAD on preload_workload: time and peak RSS", false};

constexpr double kMiB = 1024.0 * 1024.0;

// Formats a ratio, or "-" when there is none.
std::string ratioText(double r) {
  if (r <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", r);
  return buf;
}

// The allocators the registry finds; with --allocator, that one and the two baselines the
// ratios need (glibc, mimalloc).
std::vector<Location> chooseAllocators(const std::string& only) {
  std::vector<Location> all = strata::registry::locateAll(strata::registry::defaultSearchDirs());
  if (only.empty()) return all;
  if (strata::registry::findAllocator(only) == nullptr)
    strata::bench::tableUsage(kProgram, ("no allocator named " + only + " (known: " +
                                         strata::registry::knownAllocatorNames() + ")")
                                            .c_str());
  std::erase_if(all, [&](const Location& l) {
    return l.info->name != only && l.info->name != "glibc" && l.info->name != "mimalloc";
  });
  return all;
}

// Prints the table's heading and each allocator with its library or why it is missing;
// returns the available ones.
std::vector<const Location*> printAllocators(const std::vector<Location>& all,
                                             const strata::bench::TableOptions& opt) {
  std::printf("Allocators by LD_PRELOAD: median of %d runs, each a fresh process%s\n", opt.runs,
              opt.quick ? " (--quick: 1/20 size)" : "");
  std::printf("ratios = median over the rounds of the ratio within each round; "
              "RSS = peak resident set of the process (ru_maxrss)\n");
  std::vector<const Location*> avail;
  for (const Location& l : all) {
    if (l.available) {
      avail.push_back(&l);
      std::printf("  %-16s %s\n", std::string(l.info->name).c_str(),
                  l.path.empty() ? "(no preload)" : l.path.c_str());
    } else {
      std::printf("  %-16s not available: %s\n", std::string(l.info->name).c_str(),
                  strata::registry::howToGet(l).c_str());
    }
  }
  return avail;
}

// The allocators of a table and, per allocator, per workload, its three ratios (for the
// summary).
struct Table {
  std::vector<const Location*> avail;
  std::size_t glibc, mimalloc;  // indices in avail; avail.size() when absent
  std::vector<std::vector<double>> toGlibc, toMi, rssToGlibc;
  bool anyFailed = false;

  explicit Table(std::vector<const Location*> a)
      : avail(std::move(a)), glibc(avail.size()), mimalloc(avail.size()),
        toGlibc(avail.size()), toMi(avail.size()), rssToGlibc(avail.size()) {
    for (std::size_t i = 0; i < avail.size(); ++i) {
      if (avail[i]->info->name == "glibc") glibc = i;
      if (avail[i]->info->name == "mimalloc") mimalloc = i;
    }
  }
};

// Every allocator once per round, the first one rotating: samples[allocator][round].
std::vector<std::vector<Sample>> runRounds(const std::string& program, const Workload& w,
                                           double scale, int runs, const Table& t) {
  std::vector<std::vector<Sample>> samples(t.avail.size());
  for (int round = 0; round < runs; ++round)
    for (std::size_t k = 0; k < t.avail.size(); ++k) {
      const std::size_t i = (k + static_cast<std::size_t>(round)) % t.avail.size();
      samples[i].push_back(runOnce(program, w, scale, *t.avail[i]));
    }
  return samples;
}

// One allocator's row of a workload's table; its ratios go into the table for the summary.
void printRow(Table& t, std::size_t i, const std::vector<std::vector<Sample>>& samples) {
  std::vector<double> ms, rss;
  std::string error;
  int failed = 0;
  for (const Sample& s : samples[i]) {
    if (s.ok) {
      ms.push_back(s.ms);
      rss.push_back(s.rss);
    } else {
      ++failed;
      error = s.error;
    }
  }
  const std::string name(t.avail[i]->info->name);
  if (ms.empty()) {
    t.anyFailed = true;
    std::printf("%-16s %9s %7s %9s %8s %9s  FAILED in all %d runs: %s\n", name.c_str(), "-", "-",
                "-", "-", "-", failed, error.c_str());
    return;
  }
  const std::size_t n = t.avail.size();
  const double rg = t.glibc < n ? pairedRatio(samples[i], samples[t.glibc], &Sample::ms) : 0;
  const double rm = t.mimalloc < n ? pairedRatio(samples[i], samples[t.mimalloc], &Sample::ms) : 0;
  const double rr = t.glibc < n ? pairedRatio(samples[i], samples[t.glibc], &Sample::rss) : 0;
  t.toGlibc[i].push_back(rg);
  t.toMi[i].push_back(rm);
  t.rssToGlibc[i].push_back(rr);
  std::string status = "ok";
  if (failed != 0) {
    t.anyFailed = true;
    status = "ok (" + std::to_string(failed) + " runs failed: " + error + ")";
  }
  std::printf("%-16s %9.1f %7s %9s %8.1f %9s  %s\n", name.c_str(), median(ms),
              ratioText(rg).c_str(), ratioText(rm).c_str(), median(rss) / kMiB,
              ratioText(rr).c_str(), status.c_str());
}

// Runs one workload on every allocator and prints its table.
void workloadTable(Table& t, const std::string& program, const Workload& w, double scale,
                   int runs) {
  const std::vector<std::vector<Sample>> samples = runRounds(program, w, scale, runs, t);
  std::printf("\n%s — %s\n", w.label().c_str(), w.what);
  std::printf("%-16s %9s %7s %9s %8s %9s  %s\n", "allocator", "time ms", "/glibc", "/mimalloc",
              "RSS MiB", "RSS/glibc", "status");
  for (std::size_t i = 0; i < t.avail.size(); ++i) printRow(t, i, samples);
  std::fflush(stdout);
}

// The summary: per allocator the geometric mean of each ratio over the workloads.
void printSummary(const Table& t, std::size_t workloads) {
  std::printf("\nsummary — geometric mean over the %zu workloads of the per-workload ratios\n",
              workloads);
  std::printf("%-16s %11s %14s %9s\n", "allocator", "time/glibc", "time/mimalloc", "RSS/glibc");
  for (std::size_t i = 0; i < t.avail.size(); ++i) {
    std::string note;
    if (t.toGlibc[i].size() != workloads)
      note = "  (over " + std::to_string(t.toGlibc[i].size()) + " workloads)";
    std::printf("%-16s %11s %14s %9s%s\n", std::string(t.avail[i]->info->name).c_str(),
                ratioText(geomean(t.toGlibc[i])).c_str(), ratioText(geomean(t.toMi[i])).c_str(),
                ratioText(geomean(t.rssToGlibc[i])).c_str(), note.c_str());
  }
}

}  // namespace pt

int main(int argc, char** argv) {
  using namespace pt;
#if defined(__SANITIZE_ADDRESS__)
  std::fputs("preload_table: built with AddressSanitizer, which owns malloc; nothing can be "
             "preloaded into the workload. Use a build without STRATA_SANITIZE.\n",
             stderr);
  return 2;
#endif
  const strata::bench::TableOptions opt = strata::bench::parseTableOptions(kProgram, argc, argv);
  const double scale = opt.quick ? 0.05 : 1.0;
  const std::string program = strata::bench::programDirectory() + "/preload_workload";
  if (::access(program.c_str(), X_OK) != 0)
    strata::bench::tableUsage(kProgram, (program + " not found: build preload_workload").c_str());
  const std::vector<Location> all = chooseAllocators(opt.allocator);
  const std::vector<const Workload*> workloads =
      strata::bench::choosePreloadWorkloads(kProgram, opt.workload);

  Table table(printAllocators(all, opt));
  const auto start = std::chrono::steady_clock::now();
  for (const Workload* w : workloads) workloadTable(table, program, *w, scale, opt.runs);
  printSummary(table, workloads.size());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("\n(%.0f s)\n", seconds);
  return table.anyFailed ? 1 : 0;
}
