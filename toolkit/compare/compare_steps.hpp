// The steps of `strata compare`, one file each, in the order compare_run.cpp runs them:
//   compare_run.cpp      the options checked together, the allocators and inputs checked
//   compare_traces.cpp   the traces to replay: bundled workloads, files, or a recorded command
//                        (one trace per process that allocated enough to judge)
//   compare_replay.cpp   replay rounds on every allocator, the median run as a row
//   compare_live.cpp     the command itself run on every allocator (live runs)
//   compare_verdict.cpp  the combined verdict over processes, and how far replay and live agree
//   compare_plots.cpp    plots.py run over the output directory
// The tables and the JSON are compare_report.cpp's (per trace) and compare_command_report.cpp's
// (the command as a whole).
#pragma once
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "registry/allocator_registry.hpp"
#include "registry/allocator_spec.hpp"
#include "compare/compare_report.hpp"

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

// A process allocated too little to judge when it allocated less than this in total (unless
// it is the largest of its command, or --all-processes or --process names it).
inline constexpr std::uint64_t kTrivialBytes = 1u << 20;


// The traces to compare on. Fills `traces` (statistics computed and written beside the
// results), `settings.source`, a phrase for the opening line, and for a command or a trace
// with child-process traces beside it the processes left out in `command`. Throws
// support::Error with a message for the user.
void gatherTraces(const Options& o, CompareSettings& settings, std::vector<TraceReport>& traces,
                  std::string& intro, CommandReport& command);

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

// Draws the plots; returns the exit status to report (0, 1 the script failed, 3 no Python
// with matplotlib) and prints where they are to `info`. `live`: the command ran live, so
// there is a command-summary plot too.
int drawPlots(const Options& o, const std::vector<TraceReport>& traces, bool live, std::FILE* info);

// Shared by the steps: a name usable in file names, writing a whole file (throws naming it),
// and why a file cannot be read (empty when it can).
std::string fileSafe(std::string_view s);
void writeFile(const fs::path& path, const std::string& text);
std::string unreadable(const std::string& path);

}  // namespace strata::compare
