// `strata drag [-o DIR] [--sites] [--top N] -- COMMAND [ARGS...]`: runs COMMAND under Valgrind
// with Strata's drag tool (toolkit/drag) and the recorder (toolkit/record) preloaded, then computes
// how much memory it held after each object's last use (tracetools' drag analysis) and writes
// the report, the two curves and their plot, and the trace of the program as it would run
// with every object freed at its last use. docs/drag.md describes the method.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "allocator_registry.hpp"
#include "command.hpp"
#include "drag_analysis.hpp"
#include "drag_ideal_trace.hpp"
#include "drag_last_use.hpp"
#include "drag_report.hpp"
#include "files.hpp"
#include "helpers.hpp"
#include "options.hpp"
#include "process.hpp"
#include "trace_files.hpp"
#include "valgrind_run.hpp"

namespace strata::cli {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kHelp =
    "usage: strata drag [-o DIR] [--sites] [--top N] -- COMMAND [ARGS...]\n"
    "\n"
    "Measures drag: how much memory COMMAND holds after the last use of its objects. Runs\n"
    "COMMAND under Valgrind with Strata's drag tool, which watches every load and store,\n"
    "and with Strata's recorder, then reports, in allocation time (bytes allocated so far):\n"
    "total drag (the area under the live bytes as the program ran over the area under the\n"
    "live bytes had every object been freed right after its last use; 1.0 is ideal), the\n"
    "peak live bytes both ways and the increase, and (with --sites) the allocation sites\n"
    "whose objects hold the most memory after their last use.\n"
    "\n"
    "  -o DIR, --output DIR   where everything goes (default: <name of COMMAND>.drag here)\n"
    "  --sites                record allocation sites too, for the table of sites by drag\n"
    "  --top N                sites shown (default 10)\n"
    "\n"
    "Every program COMMAND runs (exec) is watched too; the report is for the process that\n"
    "allocated the most, with a line for each other. DIR receives report.txt (the report,\n"
    "also printed), program.trace and program.trace.<pid> (the recorded traces),\n"
    "last-use.<pid>.bin (the tool's last uses), curves.csv and drag.png / drag.svg (the two\n"
    "curves), ideal.trace (that process with every object freed right after its last use:\n"
    "`strata compare` on its trace and ideal.trace shows what each allocator needs with\n"
    "perfect freeing) and valgrind.<pid>.log. The program runs several to tens of times\n"
    "slower than natively (Valgrind). A program that crashes is analysed up to the crash.\n"
    "A process forked without exec is not analysed (its objects are its parent's).\n"
    "\n"
    "Exit status: 0 when the analysis was written (also for a program that failed or\n"
    "crashed: the report says so); 1 when it could not be (nothing recorded, the program\n"
    "allocated nothing, DIR not writable); 2 for a wrong invocation, or when Valgrind or\n"
    "Strata's recorder or drag tool is missing; 127 when COMMAND is not found.\n"
    "\n"
    "example: strata drag -o gcc.drag --sites -- gcc -c hello.c\n";

int usageError(const std::string& why) { return cli::usageError("drag", kHelp, why); }

struct Options {
  fs::path dir;
  bool sites = false;
  std::size_t top = 10;
  std::vector<std::string> command;
};

// Parses the arguments into o; returns a usage error's reason, or empty.
std::string parseOptions(std::span<char* const> args, Options& o) {
  static constexpr support::OptionSpec kOptions[] = {
      {"--output", true, "-o", "a DIR"}, {"--sites", false}, {"--top", true, {}, "a number"}};
  support::ParsedArgs parsed;
  if (std::string err = support::parseArgs(args, kOptions, parsed); !err.empty()) return err;
  if (!parsed.operands.empty())
    return "missing '--' before the command '" + parsed.operands[0] + "'";
  for (const support::GivenOption& g : parsed.options) {
    if (g.name == "--output") {
      if (g.value.empty()) return "the output DIR is empty";
      o.dir = g.value;
    } else if (g.name == "--sites") {
      o.sites = true;
    } else {
      const std::optional<std::uint64_t> n = support::parseUnsigned(g.value);
      if (!n || *n == 0) return "--top takes a positive number, not '" + g.value + "'";
      o.top = static_cast<std::size_t>(*n);
    }
  }
  if (!parsed.dashDash) return "missing '--' and the COMMAND to measure";
  if (parsed.command.empty()) return "missing the COMMAND to measure after '--'";
  o.command.assign(parsed.command.begin(), parsed.command.end());
  if (o.command[0].empty()) return "the COMMAND is empty";
  if (o.dir.empty()) o.dir = support::baseName(o.command[0]) + ".drag";
  return {};
}

// Runs the command under the tool, every program it execs too; returns how it ended.
support::ProcessResult runUnderTool(const Options& o, const drag::DragRun& run,
                                    const std::string& recorder) {
  support::ChildSpec spec;
  spec.argv = run.argvEveryProcess(o.dir, o.command);
  spec.set = run.environment();
  spec.set.push_back("STRATA_TRACE_FILE=" + (o.dir / "program.trace").string());
  spec.set.push_back("STRATA_TRACE_DRAG=1");
  if (o.sites) spec.set.push_back("STRATA_TRACE_SITES=1");
  spec.unset = {"STRATA_TRACE_PID", "STRATA_TRACE_CLOCK"};
  spec.preload = recorder;
  spec.stdinPath.clear();  // the program's own stdin, stdout and stderr
  return support::runChild(spec);
}

// The traces the run wrote: program.trace (the command's process), then program.trace.<pid>
// (every other process) in pid order, each with the process its program chunk names.
std::vector<DragProcess> tracesWritten(const fs::path& dir) {
  const std::string main = (dir / "program.trace").string();
  std::vector<std::string> files;
  if (fs::exists(main)) files.push_back(main);
  for (const std::string& child : childTraces(main)) files.push_back(child);
  std::vector<DragProcess> out;
  for (const std::string& file : files) {
    const TraceProgram program = readTraceProgram(file);
    DragProcess p;
    p.trace = file;
    p.pid = program.pid;
    p.program = program.path;
    out.push_back(std::move(p));
  }
  return out;
}

// Analyses each process that ran under the tool; the one that allocated the most gets the
// full report, the curves and the ideal trace. Returns the exit status.
int analyse(DragRunFacts& facts, std::vector<DragProcess>& processes) {
  const DragProcess* best = nullptr;
  std::size_t skippedNoTool = 0, skippedNothing = 0;
  std::string firstError;
  tracetools::DragOptions options;
  options.tempDir = facts.dir.string();  // the sorts' temporary files, removed when done
  for (DragProcess& p : processes) {
    const std::string lastUse = drag::DragRun::lastUseFile(facts.dir, p.pid);
    if (!fs::exists(lastUse)) {  // a fork child that did not exec, or not under Valgrind
      ++skippedNoTool;
      continue;
    }
    try {
      p.lastUse = tracetools::readLastUseFile(lastUse);
      p.result = tracetools::analyzeDrag(p.trace, p.lastUse, options);
      p.analysed = true;
      if (best == nullptr || p.result.finalClock > best->result.finalClock) best = &p;
    } catch (const tracetools::NothingAllocated&) {
      ++skippedNothing;
    } catch (const std::exception& e) {
      if (firstError.empty()) firstError = e.what();
    }
  }
  if (best == nullptr) {
    std::fprintf(stderr, "strata drag: %s (the program: %s)\n",
                 !firstError.empty() ? firstError.c_str()
                 : skippedNoTool != 0 && skippedNothing == 0
                     ? "no process ran under the drag tool (see valgrind.*.log)"
                     : "the program allocated nothing",
                 facts.status.c_str());
    return 1;
  }
  if (!firstError.empty()) facts.notes.push_back("a process was not analysed: " + firstError);
  if (skippedNoTool != 0)
    facts.notes.push_back(std::to_string(skippedNoTool) + " processes were not analysed (forked "
                          "without exec: their objects are the parent's)");
  try {
    const tracetools::IdealTraceCounts ideal =
        tracetools::writeIdealTrace(best->trace, best->lastUse, best->result,
                                    facts.dir / "ideal.trace", options);
    return writeDragReport(facts, processes, *best, ideal);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strata drag: %s\n", e.what());
    return 1;
  }
}

int runDrag(std::span<char* const> args) {
  Options o;
  if (std::string why = parseOptions(args, o); !why.empty()) return usageError(why);
  std::string why;
  const std::string found = support::resolveCommand(o.command[0], why);
  if (found.empty()) {
    std::fprintf(stderr, "strata drag: %s: %s\n", o.command[0].c_str(), why.c_str());
    return why == "command not found" ? 127 : 126;
  }
  if (!support::helperPresent(support::HelperId::Recorder)) {
    std::fprintf(stderr, "strata drag: the recorder %s\n",
                 support::helperMissing(support::HelperId::Recorder).c_str());
    return 2;
  }
  const std::string recorder = support::helperPath(support::HelperId::Recorder);
  std::optional<drag::DragRun> run =
      drag::DragRun::prepare(support::helperPath(support::HelperId::DragTool), why);
  if (!run) {
    std::fprintf(stderr, "strata drag: %s\n", why.c_str());
    return 2;
  }
  std::error_code ec;
  fs::create_directories(o.dir, ec);
  if (ec || ::access(o.dir.c_str(), W_OK) != 0) {
    std::fprintf(stderr, "strata drag: cannot write to %s: %s\n", o.dir.c_str(),
                 (ec ? ec.message() : std::string(std::strerror(errno))).c_str());
    return 1;
  }
  o.dir = fs::absolute(o.dir);
  for (const fs::directory_entry& entry : fs::directory_iterator(o.dir, ec)) {
    const std::string name = entry.path().filename().string();
    for (const char* stale : {"program.trace", "last-use.", "valgrind.", "ideal.trace",
                              "curves.csv", "drag.png", "drag.svg", "report.txt"})
      if (name.starts_with(stale)) fs::remove(entry.path(), ec);
  }

  std::fprintf(stderr, "strata drag: running %s under Valgrind (slow: every load and store is "
               "watched)\n", support::shellLine(o.command).c_str());
  const support::ProcessResult ran = runUnderTool(o, *run, recorder);
  if (!ran.started) {
    std::fprintf(stderr, "strata drag: cannot run %s: %s\n", run->valgrind().program.c_str(),
                 std::strerror(ran.startErrno));
    return 2;
  }
  DragRunFacts facts{support::shellLine(o.command), support::describeStatus(ran),
                     ran.wallSeconds, ran.succeeded(), o.dir, o.top, {}};
  std::vector<DragProcess> processes = tracesWritten(o.dir);
  if (processes.empty()) {
    std::fprintf(stderr, "strata drag: %s (%s) recorded nothing: the recorder did not start "
                 "(a statically linked program ignores LD_PRELOAD); Valgrind's messages are in "
                 "%s/valgrind.*.log\n", facts.command.c_str(), facts.status.c_str(),
                 o.dir.c_str());
    return 1;
  }
  return analyse(facts, processes);
}

}  // namespace

const Command kDragCommand{"drag", "measure the memory a program holds after its objects' last "
                           "use", kHelp, &runDrag};

}  // namespace strata::cli
