// The steps of `strata compare`, one file each, in the order compare_run.cpp runs them:
//   compare_run.cpp      the options checked together, the allocators and inputs checked,
//                        the traces gathered (tracetools/trace_inputs.hpp: bundled workloads,
//                        files, or a recorded command, one trace per process worth judging)
//   compare_replay.cpp   replay rounds on every allocator, the median run as a row
//   compare_live.cpp     the command itself run on every allocator (live runs)
//   compare_verdict.cpp  the combined verdict over processes, and how far replay and live agree
//   compare_plots.cpp    plots.py run over the output directory
// The tables and the JSON are compare_report.cpp's (per trace) and compare_command_report.cpp's
// (the command as a whole).
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "registry/allocator_registry.hpp"
#include "registry/allocator_spec.hpp"
#include "compare/compare_report.hpp"
#include "support/python.hpp"

namespace strata::compare {

namespace fs = std::filesystem;

// Everything the command line said.
struct Options {
  std::vector<std::string> traces;
  std::vector<std::string> command;  // after "--"
  std::vector<std::string> allocators;
  std::vector<std::string> processes;  // --process: program names (basenames) to compare
  std::string outDir = "strata-compare";
  unsigned runs = 3;
  unsigned threads = 0;
  std::uint64_t heapLimit = 0;
  double size = 1;
  std::uint64_t seed = 1;
  bool plots = true;
  bool json = false;
  bool live = true;          // run the command itself on every allocator (with a command)
  bool liveOnly = false;     // only the live runs: no recording, no replay
  bool allProcesses = false; // include processes that allocated too little to judge
  bool sites = false;        // --sites: each trace's top sites by bytes live at its peak
  std::string who = "strata compare";  // the name progress lines start with
};

// Replays one trace --runs rounds on every allocator (taking turns within a round) and fills
// its rows. `step` is called before each replay with a label, `skip` with the number of runs
// left out after a failure. Throws support::Error for an unreadable trace. The allocators
// come resolved and go to the runner as they are.
void replayTrace(const Options& o, const std::vector<registry::ResolvedAllocator>& where,
                 TraceReport& trace, const std::function<void(const std::string&)>& step,
                 const std::function<void(std::size_t)>& skip);

// Runs the command itself --runs rounds on every allocator and fills `live`.
// `step` is called before each run with a label.
void runLive(const Options& o, const std::vector<registry::ResolvedAllocator>& where, LiveReport& live,
             const std::function<void(const std::string&)>& step);

// The combined verdict over the processes (command.combined, fastest, smallest) and the
// agreement of the replay with the live runs.
void combineProcesses(const std::vector<TraceReport>& traces, CommandReport& command);
void computeAgreement(CommandReport& command);

// Spearman's rank correlation of two equally long series (ties get their average rank); NaN
// for fewer than three pairs or a series without variation.
double spearman(const std::vector<double>& x, const std::vector<double>& y);

// Draws the plots with plots.py; `starting` gets the Python's path before the script starts.
support::PlotRun drawPlots(const Options& o, const std::function<void(const std::string&)>& starting);
// The plots drawn for `traces` (and the command's summary when `live`), a line per trace:
// "web-heap, web-sizes, web-lifetimes, web-summary".
std::vector<std::string> plotNames(const std::vector<TraceReport>& traces, bool live);

}  // namespace strata::compare
