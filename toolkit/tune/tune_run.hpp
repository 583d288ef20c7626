// `strata tune` from its options to its report: the allocators to search checked against
// the installed ones, the traces gathered (tracetools/trace_inputs.hpp), the compositions built, the
// budget shared out over the searches, the live check of the winners and the plot. The
// command (toolkit/cli/tune.cpp) parses, calls these in order and renders.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "registry/allocator_spec.hpp"
#include "support/notes.hpp"
#include "support/progress.hpp"
#include "support/python.hpp"
#include "tune/tune_compositions.hpp"
#include "tune/tune_report.hpp"
#include "tune/tune_search.hpp"
#include "tune/tune_spaces.hpp"

namespace strata::tune {

// Everything the command line said.
struct TuneOptions {
  std::vector<std::string> traces, command, allocators;
  Goal goal = Goal::Balanced;
  std::uint64_t budgetReplays = 500;
  double budgetSeconds = 0;
  std::string budgetText = "500 replays";
  unsigned repeat = 3;
  std::uint64_t seed = 1;
  unsigned threads = 0;
  bool compositions = false, live = true, plots = true, json = false;
  std::string spaces, outDir = "strata-tune";
};

// An allocator to search: its space, where its library is, and its version.
struct Target {
  const Space* space;
  registry::ResolvedAllocator where;
  std::string version;
};

// A tuning under way: the report it fills, the allocators searched, the compositions built.
struct Tuning {
  TuneReport report;
  std::vector<Target> targets;
  std::vector<BuiltComposition> built;
};

// Checks before anything runs that every allocator named has a space, the command can be
// started and the traces read. Throws support::Error (status 2, or 1 for a trace).
void checkRequest(const Spaces& spaces, const TuneOptions& o);

// The allocators to search (each one's space checked against its installed version; one that
// is not installed is left out in report.skipped), the output directory, the traces, and with
// --compositions the compositions built; `notes` hears what takes time (recording, building).
// Throws support::Error (status 2 for a space the installed allocator rejects).
Tuning prepareTuning(const Spaces& spaces, const TuneOptions& o, const support::Notes& notes);

// Searches every target and measures every composition within the budget (glibc's default
// first when glibc is not searched: it is the common reference).
void searchAll(const TuneOptions& o, Tuning& t, support::Progress& progress);

// The live check: the command on each allocator's default and on its significant best.
void checkAllLive(const TuneOptions& o, Tuning& t, support::Progress& progress);

// Writes report.txt (`text`), tune.json and candidates.csv into --out.
void writeTuneFiles(const TuneOptions& o, const std::string& text, const TuneReport& report);

// Draws pareto.png with tune_plot.py.
support::PlotRun drawTunePlot(const TuneOptions& o);

}  // namespace strata::tune
