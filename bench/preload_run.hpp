// Running preload_workload (bench/preload_workload.cpp) as a child process, as preload_table
// and record_overhead do: the workload variants and their selection, and one run with its stdout and resource
// usage collected through the shared child-process helper (toolkit/support/process.hpp).
#pragma once
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "support/proc.hpp"
#include "support/process.hpp"
#include "table_options.hpp"

namespace strata::bench {

// One workload variant: what preload_workload is asked to run.
struct PreloadWorkload {
  const char* name;  // preload_workload's NAME
  int threads;
  const char* what;
  std::string label() const { return std::string(name) + "-" + std::to_string(threads) + "t"; }
};

inline constexpr PreloadWorkload kPreloadWorkloads[] = {
    {"churn", 1, "random-size churn, 16..4096 B log-uniform, 50k live"},
    {"churn", 2, "random-size churn, each thread its own half"},
    {"server", 1, "requests through a FIFO in one thread"},
    {"server", 2, "requests allocated by one thread, freed by the other"},
    {"grow-shrink", 1, "live set grows to ~200 MiB, shrinks in random order, twice"},
    {"grow-shrink", 2, "each thread grows half; frees dealt out at random across threads"},
    {"tiny", 1, "millions of 8..64 B objects freed in batches"},
    {"tiny", 2, "tiny, each thread its own half"},
};

// Runs `program NAME THREADS SCALE` for workload w with this process's environment, minus the
// variables named in `unset` (e.g. "LD_PRELOAD"), plus the NAME=VALUE settings in `set`;
// its stdout captured, its exit status or signal and resource usage (wait4) returned by the
// child-process helper the `strata` command uses (toolkit/support/process.hpp).
inline support::ProcessResult runPreloadWorkload(const std::string& program,
                                                 const PreloadWorkload& w, double scale,
                                                 std::vector<std::string> unset,
                                                 std::vector<std::string> set) {
  char scaleText[32];
  std::snprintf(scaleText, sizeof scaleText, "%g", scale);
  support::ChildSpec spec;
  spec.argv = {program, w.name, std::to_string(w.threads), scaleText};
  spec.unset = std::move(unset);
  spec.set = std::move(set);
  spec.captureStdout = true;
  return support::runChild(spec);
}

// Why a run does not count: empty when it exited 0, else "killed by signal 11 (SIGSEGV)",
// "exit status 3", or why it did not start.
inline std::string runFailure(const support::ProcessResult& r) {
  if (r.succeeded()) return {};
  if (!r.started) return "could not start: " + support::describeStatus(r);
  if (r.signal != 0) return "killed by " + support::describeStatus(r);
  return "exit status " + std::to_string(r.exitCode);
}

// The directory holding this program (preload_workload and the libraries are found from it).
inline std::string programDirectory() {
  const std::string dir = support::selfDirectory();
  return dir.empty() ? "." : dir;
}

// The workload variants a table program's --workload names (every one without it): its
// NAME, or NAME-Nt for one thread count. A usage error when none matches.
inline std::vector<const PreloadWorkload*> choosePreloadWorkloads(const TableProgram& p,
                                                                  const std::string& only) {
  std::vector<const PreloadWorkload*> chosen;
  for (const PreloadWorkload& w : kPreloadWorkloads)
    if (only.empty() || only == w.name || only == w.label()) chosen.push_back(&w);
  if (chosen.empty()) tableUsage(p, ("no workload named " + only).c_str());
  return chosen;
}

}  // namespace strata::bench
