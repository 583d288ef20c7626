// `strata tune [TRACE... | -- COMMAND [ARGS...]] [OPTIONS]`: searches each installed
// allocator's run-time settings on a program's trace and reports the best for a goal, checked
// side by side with the default, and (with a command) live. The steps: the search spaces
// (tune_spaces.cpp) checked against the installed allocators (tune_check.cpp), the traces
// (compare's), the search (tune_search.cpp), the report (tune_report.cpp), the plot
// (tune_plot.py) and the live check (here).
#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "command.hpp"
#include "compare_steps.hpp"
#include "options.hpp"
#include "process.hpp"
#include "progress.hpp"
#include "helpers.hpp"
#include "python.hpp"
#include "tune_check.hpp"
#include "tune_compositions.hpp"
#include "tune_live.hpp"
#include "tune_options.hpp"
#include "tune_report.hpp"

namespace strata::cli {
namespace {

using namespace tune;
namespace fs = std::filesystem;

constexpr std::string_view kHelp =
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
    "\n"
    "  --goal GOAL           balanced (default: geometric mean of the time and peak heap\n"
    "                        ratios), time, or memory (peak heap)\n"
    "  --budget N|Ns|Nm      replays in all (default 500), or seconds/minutes of searching;\n"
    "                        shared among the allocators\n"
    "  --repeat N            replays of each setting, the median used (default 3)\n"
    "  --seed N              fixes the order settings are tried in (default 1)\n"
    "  --allocators LIST     comma-separated allocators to tune (default: every one the\n"
    "                        search spaces list that is installed or built)\n"
    "  --compositions        also build the spaces' heap compositions with `strata build`\n"
    "                        and measure each as an allocator of its own\n"
    "  --spaces FILE         the search spaces (default: share/strata/tune-spaces.conf)\n"
    "  --threads N           replay threads, as `strata replay --threads` (default 0)\n"
    "  --out DIR             where results go (default ./strata-tune)\n"
    "  --no-live             with a command: do not run it live\n"
    "  --no-plots            skip the plot\n"
    "  --json                print tune.json to stdout instead of the tables\n"
    "\n"
    "Every option and value of the spaces is checked against the installed allocator before\n"
    "the search (glibc: the loader's --list-tunables; the others: started with each value set),\n"
    "and one it does not know is an error naming it and the allocator's version. A setting\n"
    "that makes an allocator crash or fail is reported and the search goes on.\n"
    "\n"
    "Output in DIR: report.txt, tune.json (every setting tried), candidates.csv and the plot\n"
    "pareto.png / pareto.svg (time against peak heap, every setting; needs python3-matplotlib).\n"
    "\n"
    "Exit status: 0 when the search ran; 1 when a trace cannot be read, no allocator could be\n"
    "tuned or the plot failed; 2 for a wrong invocation or a search space the installed\n"
    "allocators reject; 3 when the plot was skipped for want of Python with matplotlib.\n"
    "\n"
    "examples: strata tune app.trace --goal memory\n"
    "          strata tune --budget 2m -- python3 script.py\n";

int usageError(const std::string& why) { return cli::usageError("tune", kHelp, why); }

int failure(const std::string& why) {
  std::fprintf(stderr, "strata tune: %s\n", why.c_str());
  return 1;
}

// An allocator to search: its space and where its library is.
struct Target {
  const Space* space;
  registry::ResolvedAllocator where;
  std::string version;
};

int runTune(std::span<char* const> args) {
  TuneOptions o;
  if (const std::string err = parseTuneOptions(args, o); !err.empty()) return usageError(err);
  Spaces spaces;
  try {
    spaces = loadSpaces(o.spaces);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strata tune: %s\n", e.what());
    return 2;
  }
  for (const std::string& name : o.allocators) {
    const bool listed = std::any_of(spaces.allocators.begin(), spaces.allocators.end(),
                                    [&](const Space& s) { return s.allocator == name; });
    if (!listed) {
      std::string names;
      for (const Space& s : spaces.allocators) names += (names.empty() ? "" : ", ") + s.allocator;
      std::fprintf(stderr, "strata tune: no search space for allocator '%s' in %s (it has: %s)\n",
                   name.c_str(), o.spaces.c_str(), names.c_str());
      return 2;
    }
  }
  if (!o.command.empty()) {
    std::string why;
    if (support::resolveCommand(o.command[0], why).empty()) {
      std::fprintf(stderr, "strata tune: %s: %s\n", o.command[0].c_str(), why.c_str());
      return 2;
    }
  }
  for (const std::string& t : o.traces)
    if (const std::string why = compare::unreadable(t); !why.empty())
      return failure("cannot read trace '" + t + "': " + why);

  TuneReport report;
  report.spacesPath = o.spaces;
  report.budgetText = o.budgetText;

  // The allocators to search, each checked against the installed version before any replay.
  const registry::SearchDirs dirs = registry::defaultSearchDirs();
  std::vector<Target> targets;
  for (const Space& space : spaces.allocators) {
    if (!o.allocators.empty() &&
        std::find(o.allocators.begin(), o.allocators.end(), space.allocator) == o.allocators.end())
      continue;
    registry::AllocatorSpec spec;
    if (const std::string err = registry::parseSpec(space.allocator, spec); !err.empty()) {
      std::fprintf(stderr, "strata tune: %s:%d: %s\n", o.spaces.c_str(), space.line, err.c_str());
      return 2;
    }
    Target t{&space, registry::resolve(spec, dirs), {}};
    if (!t.where.available) {
      report.skipped.push_back(space.allocator + ": " + t.where.detail);
      continue;
    }
    const registry::ProbeResult p = registry::probe(t.where);
    if (!p.ok) {
      report.skipped.push_back(space.allocator + ": " + p.reason);
      continue;
    }
    t.version = p.version;
    if (const std::string err = checkSpace(space, t.where, t.version, o.spaces); !err.empty()) {
      std::fprintf(stderr, "strata tune: %s\n", err.c_str());
      return 2;
    }
    targets.push_back(std::move(t));
  }

  const fs::path out = o.outDir;
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) return failure("cannot create the output directory " + o.outDir + ": " + ec.message());

  // The traces: the files given, or the command recorded (compare's steps).
  compare::Options co;
  co.traces = o.traces;
  co.command = o.command;
  co.outDir = o.outDir;
  co.who = "strata tune";
  CompareSettings cs;
  std::vector<TraceReport> traces;
  CommandReport command;
  try {
    compare::gatherTraces(co, cs, traces, report.intro, command);
  } catch (const std::exception& e) {
    return failure(e.what());
  }
  SearchSettings& settings = report.settings;
  for (const TraceReport& t : traces) settings.traces.push_back(t.path);
  settings.repeat = o.repeat;
  settings.budgetReplays = o.budgetReplays;
  settings.budgetSeconds = o.budgetSeconds;
  settings.seed = o.seed;
  settings.goal = o.goal;
  settings.threads = o.threads;
  report.appLine = o.command.empty() ? "./app" : support::shellLine(o.command);

  // The compositions, built before the search so a failed build is known early.
  std::vector<BuiltComposition> built;
  if (o.compositions) {
    built = buildCompositions(spaces, out / "compositions", report.skipped);
  }

  std::string text = formatIntro(report);
  for (const std::string& s : report.skipped) text += "  not tuned: " + s + "\n";
  if (!o.json) std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
  const auto show = [&](const std::string& block) {
    text += block;
    if (!o.json) {
      std::fputs(block.c_str(), stdout);
      std::fflush(stdout);
    }
  };
  if (targets.empty() && built.empty()) return failure("no allocator to tune (see the lines above)");

  // The searched allocators share the budget; each composition costs one setting's replays
  // (in a budget of seconds, they share it as the others do).
  const std::size_t parts = targets.size() + (o.budgetSeconds > 0 ? built.size() : 0);
  const double compositionCost =
      o.budgetSeconds > 0 ? 0 : static_cast<double>(built.size() * o.repeat * traces.size());
  const double total = o.budgetSeconds > 0 ? o.budgetSeconds
                                           : std::max(0.0, static_cast<double>(o.budgetReplays) - compositionCost);
  Progress progress(o.budgetSeconds > 0 ? 0 : o.budgetReplays);
  const auto step = [&](const std::string& what) { progress.step(what); };
  double spent = 0;
  const auto clockNow = [] { return std::chrono::steady_clock::now(); };
  const auto started = clockNow();

  // glibc's default is the common reference: measured on its own when glibc is not searched.
  const bool glibcSearched = std::any_of(targets.begin(), targets.end(),
                                         [](const Target& t) { return t.space->allocator == "glibc"; });
  if (!glibcSearched) {
    progress.note("strata tune: measuring glibc's default as the reference");
    report.glibc = measureSpec("glibc", settings, settings.repeat, step);
    spent += o.budgetSeconds > 0 ? 0 : static_cast<double>(settings.repeat * settings.traces.size());
  }
  std::size_t index = 0;
  const auto share = [&] {
    const double used = o.budgetSeconds > 0
                            ? std::chrono::duration<double>(clockNow() - started).count()
                            : spent;
    return parts > index ? std::max(0.0, (total - used) / static_cast<double>(parts - index)) : 0.0;
  };
  for (const Target& t : targets) {
    AllocatorRun run;
    run.name = t.where.spec.label;
    run.version = t.version;
    run.library = t.where.preload;
    run.space = t.space;
    progress.note("strata tune: searching " + run.name + "'s settings");
    searchAllocator(run, t.where, settings, share(), step);
    confirmBest(run, settings, step);
    spent += static_cast<double>(run.replays);
    ++index;
    if (run.name == "glibc" && !run.candidates.empty()) report.glibc = run.candidates.front().measure;
    report.runs.push_back(std::move(run));
  }
  for (const BuiltComposition& b : built) {
    AllocatorRun run;
    run.name = b.name;
    run.library = b.library;
    run.composition = true;
    run.version = "strata build";
    Candidate c;
    c.description = b.type;
    c.spec = b.name + "=" + b.library;
    run.candidates.push_back(c);
    progress.note("strata tune: measuring the composition " + run.name);
    searchAllocator(run, registry::ResolvedAllocator{}, settings, share(), step);
    spent += static_cast<double>(run.replays);
    ++index;
    report.runs.push_back(std::move(run));
  }
  progress.clear();
  for (const AllocatorRun& run : report.runs) show(formatRun(report, run));
  show(formatFront(report));

  // The live check: the command on each allocator's default and its significant best.
  if (!o.command.empty() && o.live) {
    for (const AllocatorRun& run : report.runs) {
      if (run.composition || run.verdict.candidate < 0 || !run.verdict.significant) continue;
      const Target* t = nullptr;
      for (const Target& x : targets)
        if (x.space->allocator == run.name) t = &x;
      if (t == nullptr) continue;
      const Candidate& best = run.candidates[static_cast<std::size_t>(run.verdict.candidate)];
      const LiveCheck l = checkLive(run.name, o.command, t->where, best, o.repeat,
                                    [&](const std::string& line) { progress.note(line); });
      report.live.push_back(l);
    }
    if (report.live.empty()) show("\nLive check: no allocator has a setting that beats its default, nothing to run\n");
    else show(formatLive(report));
  }

  try {
    compare::writeFile(out / "report.txt", text);
    compare::writeFile(out / "tune.json", tuneJson(report));
    compare::writeFile(out / "candidates.csv", candidatesCsv(report));
  } catch (const std::exception& e) {
    return failure(e.what());
  }
  if (o.json) std::fputs(tuneJson(report).c_str(), stdout);
  std::FILE* info = o.json ? stderr : stdout;
  int status = 0;
  if (o.plots) {
    const std::optional<std::string> python = findPython();
    if (!python) {
      std::fprintf(stderr, "strata tune: the plot needs python3-matplotlib (apt-get install "
                   "python3-matplotlib)\n");
      status = 3;
    } else {
      support::ChildSpec spec;
      spec.argv = {*python, support::helperPath(support::HelperId::TunePlot), o.outDir};
      const support::ProcessResult r = support::runChild(spec);
      if (!r.succeeded()) {
        std::fprintf(stderr, "strata tune: the plot script failed (%s)\n", support::describeStatus(r).c_str());
        status = 1;
      } else {
        std::fprintf(info, "\nplot: %s\n", (out / "pareto.png").c_str());
      }
    }
  }
  std::fprintf(info, "tables: %s; every setting: %s\n", (out / "report.txt").c_str(),
               (out / "tune.json").c_str());
  return status;
}

}  // namespace

const Command kTuneCommand{"tune", "search each allocator's settings on a trace for the best ones",
                           kHelp, &runTune};

}  // namespace strata::cli
