// `strata drag [-o DIR] [--sites] [--top N] -- COMMAND [ARGS...]`: runs COMMAND under Valgrind
// with Strata's drag tool (src/drag) and the recorder (src/record) preloaded, then computes
// how much memory it held after each object's last use (tracetools' drag analysis) and writes
// the report, the two curves and their plot, and the trace of the program as it would run
// with every object freed at its last use. docs/drag.md describes the method.
#include <sys/stat.h>
#include <unistd.h>

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
#include "options.hpp"
#include "process.hpp"
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
    "DIR receives report.txt (the report, also printed), program.trace (the recorded\n"
    "trace), last-use.bin (the tool's last uses), curves.csv and drag.png / drag.svg (the\n"
    "two curves), ideal.trace (the program with every object freed right after its last\n"
    "use: `strata compare DIR/program.trace DIR/ideal.trace` shows what each allocator\n"
    "needs with perfect freeing) and valgrind.log. The program runs tens of times slower\n"
    "than natively (Valgrind). A program that crashes is analysed up to the crash.\n"
    "Objects of forked child processes are not analysed.\n"
    "\n"
    "Exit status: 0 when the analysis was written (also for a program that failed or\n"
    "crashed: the report says so); 1 when it could not be (nothing recorded, the program\n"
    "allocated nothing, DIR not writable); 2 for a wrong invocation, or when Valgrind or\n"
    "Strata's recorder or drag tool is missing; 127 when COMMAND is not found.\n"
    "\n"
    "example: strata drag -o gcc.drag --sites -- gcc -c hello.c\n";

int usageError(const std::string& why) { return cli::usageError("drag", kHelp, why); }

// The last component of a path ("a/b/prog" -> "prog").
std::string baseName(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  const std::size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

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
  if (o.dir.empty()) o.dir = baseName(o.command[0]) + ".drag";
  return {};
}

// Runs the command under the tool; returns how it ended (started == false: not found).
support::ProcessResult runUnderTool(const Options& o, const drag::DragRun& run,
                                    const std::string& recorder) {
  support::ChildSpec spec;
  spec.argv = run.argv(o.dir / "last-use.bin", o.command,
                       {"--log-file=" + (o.dir / "valgrind.log").string()});
  spec.set = run.environment();
  spec.set.push_back("STRATA_TRACE_FILE=" + (o.dir / "program.trace").string());
  spec.set.push_back("STRATA_TRACE_DRAG=1");
  if (o.sites) spec.set.push_back("STRATA_TRACE_SITES=1");
  spec.unset = {"STRATA_TRACE_PID", "STRATA_TRACE_CLOCK"};
  spec.preload = recorder;
  spec.stdinPath.clear();  // the program's own stdin, stdout and stderr
  return support::runChild(spec);
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
  const std::string libDir = defaultSearchDirs().strata;
  const std::string recorder = libDir + "/libstrata-record.so";
  if (::access(recorder.c_str(), R_OK) != 0) {
    std::fprintf(stderr, "strata drag: the recorder libstrata-record.so is not built (looked in "
                 "%s): build the CMake target strata_record, or set STRATA_LIB_DIR\n",
                 libDir.c_str());
    return 2;
  }
  std::optional<drag::DragRun> run = drag::DragRun::prepare(libDir + "/" + drag::kToolFile, why);
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
  for (const char* stale : {"program.trace", "last-use.bin", "ideal.trace", "curves.csv",
                            "drag.png", "drag.svg", "report.txt", "valgrind.log"})
    fs::remove(o.dir / stale, ec);

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
  if (!fs::exists(o.dir / "program.trace") || fs::file_size(o.dir / "program.trace", ec) == 0) {
    std::fprintf(stderr, "strata drag: %s (%s) recorded nothing: the recorder did not start "
                 "(a statically linked program ignores LD_PRELOAD); Valgrind's messages are in "
                 "%s\n", facts.command.c_str(), facts.status.c_str(),
                 (o.dir / "valgrind.log").c_str());
    return 1;
  }
  try {
    tracetools::LastUseData lastUse;
    if (fs::exists(o.dir / "last-use.bin")) {
      lastUse = tracetools::readLastUseFile(o.dir / "last-use.bin");
    } else {
      lastUse.incomplete = "the drag tool wrote no last-use file";
      facts.notes.push_back("the drag tool wrote nothing (see valgrind.log): every object "
                            "counts as used until it ends");
    }
    const tracetools::DragResult result = tracetools::analyzeDrag(o.dir / "program.trace",
                                                                  lastUse);
    const tracetools::IdealTraceCounts ideal =
        tracetools::writeIdealTrace(o.dir / "program.trace", result, o.dir / "ideal.trace");
    return writeDragReport(facts, lastUse, result, ideal);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strata drag: %s (the program: %s)\n", e.what(), facts.status.c_str());
    return 1;
  }
}

}  // namespace

const Command kDragCommand{"drag", "measure the memory a program holds after its objects' last "
                           "use", kHelp, &runDrag};

}  // namespace strata::cli
