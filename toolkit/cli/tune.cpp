// `strata tune [TRACE... | -- COMMAND [ARGS...]] [OPTIONS]`: searches each installed
// allocator's run-time settings on a program's trace and reports the best for a goal, checked
// side by side with the default, and (with a command) live. This file is the help and what is
// shown where; the steps are toolkit/tune's (tune_run.hpp), the options table
// tune_options.cpp's.
#include <cstdio>
#include <string>
#include <string_view>

#include "cli/command.hpp"
#include "support/error.hpp"
#include "report/report_writer.hpp"
#include "cli/tune_options.hpp"

namespace strata::cli {

using namespace strata::tune;  // the component this command drives
namespace {

using namespace tune;

constexpr std::string_view kAbout =
    "usage: strata tune (TRACE... | -- COMMAND [ARGS...]) [OPTIONS]\n"
    "\n"
    "Searches the run-time settings of every installed allocator (glibc's tunables, jemalloc's\n"
    "MALLOC_CONF, mimalloc's and tcmalloc's environment, libstrata.so's STRATA_* options) by\n"
    "replaying the program's trace, and prints per allocator its default and its best setting\n"
    "for the goal: time and peak heap as ratios to that default and to glibc's default, the\n"
    "gain against the noise of the runs, and the command lines that use it. The best setting\n"
    "is measured again side by side with the default; a gain is claimed only when it is\n"
    "larger than the spread of those runs (and at least 1%).\n"
    "\n"
    "  TRACE...              tune on these traces (from `strata record`), taken together as\n"
    "                        one program: times and peak heaps summed\n"
    "  -- COMMAND [ARGS...]  record COMMAND (each process that allocated enough to judge),\n"
    "                        tune on its traces, then run COMMAND live on each allocator's\n"
    "                        default and best setting and print the live gain beside the\n"
    "                        predicted one\n"
    "\n";

constexpr std::string_view kNotes =
    "\n"
    "Every option and value of the spaces is checked against the installed allocator before\n"
    "the search (glibc: the loader's --list-tunables; the others: started with each value set),\n"
    "and one it does not know is an error naming it and the allocator's version. A setting\n"
    "that makes an allocator crash or fail is reported and the search goes on.\n"
    "\n"
    "Output in DIR: report.txt, tune.json (every setting tried, with the command lines that\n"
    "use it), candidates.csv, the plot pareto.png / pareto.svg (time against peak heap, every\n"
    "setting; needs python3-matplotlib), and last report.html (everything on one page, drawn\n"
    "from tune.json and candidates.csv).\n"
    "\n"
    "Exit status: 0 when the search ran; 1 when a trace cannot be read, no allocator could be\n"
    "tuned, the plot failed or report.html could not be written; 2 for a wrong invocation or\n"
    "a search space the installed allocators reject; 3 when the plot was skipped for want of\n"
    "Python with matplotlib.\n"
    "\n"
    "examples: strata tune app.trace --goal memory\n"
    "          strata tune --budget 2m -- python3 script.py\n";

const std::string kHelp = std::string(kAbout) + tune_options::optionsHelp() + std::string(kNotes);

int runTune(std::span<char* const> args) {
  const TuneOptions o = tune_options::parseTuneOptions(args);
  const Spaces spaces = loadSpaces(o.spaces);
  checkRequest(spaces, o);
  Tuning t = prepareTuning(spaces, o, note);

  std::string text;
  const auto show = [&](const std::string& block) {
    text += block;
    if (!o.json) std::fputs(block.c_str(), stdout);
    std::fflush(stdout);
  };
  std::string intro = formatIntro(t.report);
  for (const std::string& s : t.report.skipped) intro += "  not tuned: " + s + "\n";
  show(intro);
  if (t.targets.empty() && t.built.empty())
    throw support::Error("no allocator to tune (see the lines above)");

  support::Progress progress(o.budgetSeconds > 0 ? 0 : o.budgetReplays);
  searchAll(o, t, progress);
  progress.clear();
  for (const AllocatorRun& run : t.report.runs) show(formatRun(t.report, run));
  show(formatFront(t.report));
  if (!o.command.empty() && o.live) {
    checkAllLive(o, t, progress);
    show(t.report.live.empty()
             ? "\nLive check: no allocator has a setting that beats its default, nothing to run\n"
             : formatLive(t.report));
  }

  writeTuneFiles(o, text, t.report);
  if (o.json) std::fputs(tuneJson(t.report).c_str(), stdout);
  std::FILE* info = o.json ? stderr : stdout;
  int status = 0;
  if (o.plots) {
    const support::PlotRun plot = drawTunePlot(o);
    if (plot.drawn())
      std::fprintf(info, "\nplot: %s\n", (std::filesystem::path(o.outDir) / "pareto.png").c_str());
    else
      note("strata tune: the plot " + plot.problem());
    status = plot.exitStatus();
  }
  const std::filesystem::path out = o.outDir;
  std::fprintf(info, "tables: %s; every setting: %s\n", (out / "report.txt").c_str(),
               (out / "tune.json").c_str());
  std::fflush(info);
  // Last, once every file it embeds is written: an error here loses none of them.
  std::fprintf(info, "report: %s\n", report::writeReport(out).c_str());
  return status;
}

}  // namespace

const Command kTuneCommand{"tune", "search each allocator's settings on a trace for the best ones",
                           kHelp, &runTune};

}  // namespace strata::cli
