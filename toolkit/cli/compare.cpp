// `strata compare [TRACE... | -- COMMAND ARGS...] [OPTIONS]`: replays traces on every
// allocator and shows which one suits them; with a command, also runs the command itself on
// every allocator and says how far the two verdicts agree. This file is the help and the
// order of the steps; each step is a file of its own (compare_steps.hpp), the tables and the
// JSON are compare_report.cpp's.
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "command.hpp"
#include "compare_steps.hpp"
#include "process.hpp"
#include "progress.hpp"

namespace strata::cli {
namespace {

using namespace compare;

constexpr std::string_view kHelp =
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
    "\n"
    "  --allocators LIST     comma-separated allocator specs (default: every one `strata\n"
    "                        allocators` lists); one that is not installed or built shows as\n"
    "                        unavailable. A spec is a name, a library path, either with\n"
    "                        settings: 'mine=./libmine.so,jemalloc:MALLOC_CONF=narenas:1'\n"
    "                        (`strata run --help`); may be given more than once\n"
    "  --out DIR             where results go (default ./strata-compare; files are overwritten)\n"
    "  --runs N              replays (and live runs) per allocator, the median is shown (default 3)\n"
    "  --threads N           replay threads: 0 the program's, as recorded (default); N a fixed\n"
    "                        pool of N; 1 the total order on one thread\n"
    "  --heap-limit SIZE     stop a replay whose heap exceeds SIZE (bytes, or K/M/G/T suffix)\n"
    "  --process LIST        compare only the processes running these programs (basenames)\n"
    "  --all-processes       also compare processes that allocated under 1 MiB\n"
    "  --no-live             do not run the command live\n"
    "  --live-only           only run the command live: no recording, no replay\n"
    "  --size X              size of the bundled workloads, about X million events (default 1)\n"
    "  --seed N              seed of the bundled workloads (default 1)\n"
    "  --no-plots            skip the plots\n"
    "  --json                print results.json to stdout instead of the tables\n"
    "  --sites               for traces that carry allocation sites: after each trace's\n"
    "                        table, its top 10 sites by bytes live at the trace's peak (a\n"
    "                        figure of the trace, the same for every allocator); a COMMAND\n"
    "                        is recorded with its sites (strata record --sites)\n"
    "\n"
    "Output in DIR: report.txt (the tables), results.json (every run), <trace>-stats.json,\n"
    "series/<trace>-<allocator>.csv (heap and live bytes over the run), live/ (each live run's\n"
    "stdout), and the plots <trace>-heap, -sizes, -lifetimes, -summary (and command-summary\n"
    "with live runs) as .png and .svg. Plots need Python with matplotlib (Debian: apt-get\n"
    "install python3-matplotlib); STRATA_PYTHON names the Python.\n"
    "\n"
    "Exit status: 0 when every available allocator finished (ok or heap-limit) and ran the\n"
    "command live as glibc did; 1 when a replay or a live run failed or a trace cannot be read;\n"
    "2 for a wrong invocation, an unknown allocator or a COMMAND that is not found or not\n"
    "executable; 3 when the plots were skipped because no Python with matplotlib was found.\n"
    "\n"
    "examples: strata compare\n"
    "          strata compare --allocators glibc,jemalloc,strata -- python3 -c 'print(42)'\n";

// A wrong invocation: the reason and the usage (command.hpp); exit status 2.
int usageError(const std::string& why) { return cli::usageError("compare", kHelp, why); }

// A failure the user can act on (naming the file); exit status 1.
int failure(const std::string& why) {
  std::fprintf(stderr, "strata compare: %s\n", why.c_str());
  return 1;
}

// Writes report.txt and results.json as they stand (after every step, so an interrupted
// comparison leaves what it measured).
void writeResults(const fs::path& out, const std::string& report, const CompareSettings& settings,
                  const std::vector<TraceReport>& traces, const CommandReport* command) {
  writeFile(out / "report.txt", report);
  writeFile(out / "results.json", resultsJson(settings, traces, command));
}

int runCompare(std::span<char* const> args) {
  Options o;
  if (const std::string err = parseOptions(args, o); !err.empty()) return usageError(err);
  // Every allocator spec parses, has a label of its own, and (when its library is there)
  // preloads and takes over malloc: checked before anything runs.
  const registry::SearchDirs dirs = registry::defaultSearchDirs();
  std::vector<registry::ResolvedAllocator> where;
  std::size_t available = 0;
  for (const std::string& text : o.allocators) {
    registry::AllocatorSpec spec;
    if (const std::string err = registry::parseSpec(text, spec); !err.empty()) {
      std::fprintf(stderr, "strata compare: %s\n", err.c_str());
      return 2;
    }
    for (const registry::ResolvedAllocator& other : where)
      if (other.spec.label == spec.label) {
        std::fprintf(stderr, "strata compare: two allocators are labelled '%s' ('%s' and '%s'); "
                     "name one: LABEL=SPEC\n", spec.label.c_str(), other.spec.text.c_str(),
                     spec.text.c_str());
        return 2;
      }
    where.push_back(registry::resolve(spec, dirs));
    if (!where.back().available) continue;
    if (const registry::ProbeResult p = registry::probe(where.back()); !p.ok) {
      std::fprintf(stderr, "strata compare: %s\n", p.reason.c_str());
      return 2;
    }
    ++available;
  }
  // A command that cannot run is an error before anything runs.
  if (!o.command.empty()) {
    std::string why;
    if (support::resolveCommand(o.command[0], why).empty()) {
      std::fprintf(stderr, "strata compare: %s: %s\n", o.command[0].c_str(), why.c_str());
      return 2;
    }
  }
  for (const std::string& t : o.traces)
    if (const std::string why = unreadable(t); !why.empty())
      return failure("cannot read trace '" + t + "': " + why);

  const fs::path out = o.outDir;
  std::error_code ec;
  fs::create_directories(out / "series", ec);
  if (ec) return failure("cannot create the output directory " + o.outDir + ": " + ec.message());

  CompareSettings settings;
  settings.outDir = o.outDir;
  settings.runs = o.runs;
  settings.threads = o.threads;
  settings.heapLimit = o.heapLimit;
  settings.size = o.size;
  settings.seed = o.seed;
  settings.live = !o.command.empty() && o.live;

  std::vector<TraceReport> traces;
  std::string intro;
  CommandReport command;
  try {
    gatherTraces(o, settings, traces, intro, command);
  } catch (const std::exception& e) {
    return failure(e.what());
  }
  // The command block (combined verdict, live runs) is shown for a command, and for a trace
  // whose child processes' traces were found beside it.
  // Several trace files named, or the bundled workloads, are separate programs: no block.
  const bool family = o.command.empty() && o.traces.size() == 1;
  const bool commandBlock = !o.command.empty() ||
                            (family && (traces.size() > 1 || !command.skippedProcesses.empty()));
  const CommandReport* commandOut = commandBlock ? &command : nullptr;


  std::string report = "strata compare: " + std::to_string(o.allocators.size()) + " allocators (" +
                       std::to_string(available) + " available) on " + intro + ", " +
                       std::to_string(o.runs) + (o.runs == 1 ? " run" : " runs") +
                       " each, median shown; results in " + o.outDir + "/\n";
  // The processes left out, the largest first; a long list is cut short (results.json has all).
  constexpr std::size_t kListed = 5;
  for (std::size_t i = 0; i < command.skippedProcesses.size() && i < kListed; ++i)
    report += "   not compared: " + command.skippedProcesses[i] + "\n";
  if (command.skippedProcesses.size() > kListed)
    report += "   not compared: " + std::to_string(command.skippedProcesses.size() - kListed) +
              " more smaller processes\n";
  if (!o.json) {
    std::fputs(report.c_str(), stdout);
    std::fflush(stdout);
  }
  const auto show = [&](const std::string& block) {
    report += block;
    if (!o.json) {
      std::fputs(block.c_str(), stdout);
      std::fflush(stdout);
    }
  };

  Progress progress((traces.size() + (settings.live ? 1 : 0)) * available * o.runs);
  const auto step = [&](const std::string& label) { progress.step(label); };
  const auto skip = [&](std::size_t n) { progress.skip(n); };
  bool anyFailed = false;
  try {
    for (std::size_t t = 0; t < traces.size(); ++t) {
      TraceReport& trace = traces[t];
      progress.note("strata compare: " + trace.name + " (" + std::to_string(t + 1) + "/" +
                    std::to_string(traces.size()) + "): replaying on " +
                    std::to_string(available) + " allocators, " + std::to_string(o.runs) +
                    (o.runs == 1 ? " run" : " runs") + " each");
      replayTrace(o, where, dirs, trace, step, skip);
      for (const AllocatorRow& r : trace.rows) anyFailed = anyFailed || r.failed();
      progress.clear();
      show("\n" + formatTable(trace));
      std::vector<TraceReport> done(traces.begin(), traces.begin() + static_cast<long>(t + 1));
      writeResults(out, report, settings, done, nullptr);
    }
    if (commandBlock) {
      combineProcesses(traces, command);
      if (settings.live) {
        progress.note("strata compare: running " + command.commandLine + " on " +
                      std::to_string(available) + " allocators, " + std::to_string(o.runs) +
                      (o.runs == 1 ? " run" : " runs") + " each");
        runLive(o, where, command.live, step);
        command.haveLive = true;
        for (const LiveRow& r : command.live.rows)
          anyFailed = anyFailed || (!r.ok() && r.status != LiveStatus::Unavailable);
        computeAgreement(command);
        progress.clear();
      }
      show("\n" + formatCommand(command, traces));
    }
    writeResults(out, report, settings, traces, commandOut);
  } catch (const std::exception& e) {
    progress.clear();
    return failure(e.what());
  }
  if (o.json) std::fputs(resultsJson(settings, traces, commandOut).c_str(), stdout);
  std::fflush(stdout);

  // Where everything is; in --json mode on stderr, so stdout stays one JSON document.
  std::FILE* info = o.json ? stderr : stdout;
  int status = anyFailed ? 1 : 0;
  if (o.plots) {
    const int plotStatus = drawPlots(o, traces, command.haveLive, info);
    if (plotStatus == 1 || (plotStatus == 3 && status == 0)) status = plotStatus;
  }
  std::fprintf(info, "%stables: %s; every result: %s\n", o.plots ? "" : "\n",
               (out / "report.txt").c_str(), (out / "results.json").c_str());
  return status;
}

}  // namespace

const Command kCompareCommand{"compare",
                              "replay traces on every allocator: a table and plots (start here)",
                              kHelp, &runCompare};

}  // namespace strata::cli
