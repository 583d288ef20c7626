// `strata compare [TRACE... | -- COMMAND ARGS...] [OPTIONS]`: replays traces on every
// allocator and shows which one suits them; with a command, also runs the command itself on
// every allocator and says how far the two verdicts agree. This file is the help and what is
// shown where; the comparison is toolkit/compare's (compare_run.hpp), the options table
// compare_options.cpp's.
#include <cstdio>
#include <string>
#include <string_view>

#include "cli/command.hpp"
#include "cli/compare_options.hpp"
#include "report/report_writer.hpp"

namespace strata::cli {

using namespace strata::compare;  // the component this command drives
namespace {

using namespace compare;

constexpr std::string_view kAbout =
    "usage: strata compare [TRACE... | -- COMMAND [ARGS...]] [OPTIONS]\n"
    "\n"
    "Replays allocation traces on every allocator and prints, per trace, a table of wall time,\n"
    "ratio to the fastest, peak heap, peak live bytes, fragmentation and status; writes plots\n"
    "(heap over the run, size and lifetime histograms, a summary) beside it. With a command it\n"
    "also runs the command itself on every allocator (live) and sets its time, CPU time, peak\n"
    "RSS, exit status and output beside the replay's figures.\n"
    "\n"
    "  (nothing)             generate the bundled workloads (web-proxy, editor, server) and\n"
    "                        compare on each of them\n"
    "  TRACE...              compare on these trace files (from `strata record`); one FILE with\n"
    "                        FILE.<pid> traces of child processes beside it is compared per process\n"
    "  -- COMMAND [ARGS...]  record COMMAND (every process it starts) with `strata record`,\n"
    "                        compare on each process's trace, and run COMMAND live\n"
    "\n";

constexpr std::string_view kNotes =
    "\n"
    "Output in DIR: report.txt (the tables), results.json (every run), <trace>-stats.json,\n"
    "series/<trace>-<allocator>.csv (heap and live bytes over the run), with live runs\n"
    "series/live-<allocator>.csv (the median run's RSS over time, sampled from /proc) and\n"
    "live/ (each live run's stdout), the plots <trace>-heap, -sizes, -lifetimes, -summary (and\n"
    "command-summary with live runs) as .png and .svg, and last report.html (everything on one\n"
    "page, drawn from results.json and the files it names; also with --no-plots). Plots need\n"
    "Python with matplotlib (Debian: apt-get install python3-matplotlib); STRATA_PYTHON names\n"
    "the Python.\n"
    "\n"
    "Exit status: 0 when every available allocator finished (ok or heap-limit) and ran the\n"
    "command live as glibc did; 1 when a replay or a live run failed, a trace cannot be read\n"
    "or report.html could not be written (the other files are); 2 for a wrong invocation, an\n"
    "unknown allocator or a COMMAND that is not found or not executable; 3 when the plots\n"
    "were skipped because no Python with matplotlib was found.\n"
    "\n"
    "examples: strata compare\n"
    "          strata compare --allocators glibc,jemalloc,strata -- python3 -c 'print(42)'\n";

const std::string kHelp = std::string(kAbout) + compare_options::optionsHelp() + std::string(kNotes);

// Prints a block of the report as it is ready (not with --json: stdout is the JSON then).
void showText(const Options& o, const std::string& block) {
  if (o.json) return;
  std::fputs(block.c_str(), stdout);
  std::fflush(stdout);
}

// Draws the plots and says where they are on `info`, or on stderr why there are none;
// returns the exit status for them (support::PlotRun::exitStatus).
int plot(const Options& o, const Comparison& c, std::FILE* info) {
  const std::string table = (fs::path(o.outDir) / "report.txt").string();
  const support::PlotRun run = drawPlots(o, [](const std::string& python) {
    note("strata compare: drawing the plots with " + python);
  });
  if (run.outcome == support::PlotRun::Outcome::NoPython)
    note("strata compare: plots need python3-matplotlib (apt-get install python3-matplotlib); "
         "the table is in " + table);
  else if (!run.drawn())
    note("strata compare: the plot " + run.problem() + "; the table is in " + table);
  if (!run.drawn()) return run.exitStatus();
  std::fprintf(info, "\nplots (.png and .svg) in %s/:\n", o.outDir.c_str());
  for (const std::string& line : plotNames(c.traces, c.command.haveLive))
    std::fprintf(info, "  %s\n", line.c_str());
  return 0;
}

int runCompare(std::span<char* const> args) {
  const Options o = compare_options::parseCompareOptions(args);
  const Allocators allocators = resolveAllocators(o.allocators);
  tracetools::checkInputs(o.command, o.traces);
  const Comparison c = runComparison(
      o, allocators, [&](const std::string& block) { showText(o, block); }, note);
  if (o.json) std::fputs(resultsJson(c.settings, c.traces, c.commandOut()).c_str(), stdout);
  std::fflush(stdout);

  // Where everything is; in --json mode on stderr, so stdout stays one JSON document.
  std::FILE* info = o.json ? stderr : stdout;
  int status = c.anyFailed ? 1 : 0;
  if (o.plots) {
    const int plotStatus = plot(o, c, info);
    if (plotStatus == 1 || (plotStatus == 3 && status == 0)) status = plotStatus;
  }
  const fs::path out = o.outDir;
  std::fprintf(info, "%stables: %s; every result: %s\n", o.plots ? "" : "\n",
               (out / "report.txt").c_str(), (out / "results.json").c_str());
  std::fflush(info);
  // Last, once every file it embeds is written: an error here loses none of them.
  std::fprintf(info, "report: %s\n", report::writeReport(out).c_str());
  return status;
}

}  // namespace

const Command kCompareCommand{"compare",
                              "replay traces on every allocator: a table and plots (start here)",
                              kHelp, &runCompare};

}  // namespace strata::cli
