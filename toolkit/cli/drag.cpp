// `strata drag [-o DIR] [--sites] [--top N] -- COMMAND [ARGS...]`: runs COMMAND under Valgrind
// with Strata's drag tool (toolkit/drag) and the recorder (toolkit/record) preloaded, then computes
// how much memory it held after each object's last use (the drag analysis) and writes the
// report, the two curves and their plot, and the trace of the program as it would run with
// every object freed at its last use. The run is the drag component's (drag_session.hpp);
// docs/toolkit/drag.md describes the method.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.hpp"
#include "drag/drag_session.hpp"
#include "support/files.hpp"
#include "support/options.hpp"
#include "report/report_writer.hpp"

namespace strata::cli {

using namespace strata::drag;  // the component this command drives
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kUsage =
    "usage: strata drag [-o DIR] [--sites] [--top N] -- COMMAND [ARGS...]\n"
    "\n"
    "Measures drag: how much memory COMMAND holds after the last use of its objects. Runs\n"
    "COMMAND under Valgrind with Strata's drag tool, which watches every load and store,\n"
    "and with Strata's recorder, then reports, in allocation time (bytes allocated so far):\n"
    "total drag (the area under the live bytes as the program ran over the area under the\n"
    "live bytes had every object been freed right after its last use; 1.0 is ideal), the\n"
    "peak live bytes both ways and the increase, and (with --sites) the allocation sites\n"
    "whose objects hold the most memory after their last use.\n"
    "\n";

constexpr std::string_view kAfterOptions =
    "\n"
    "Every program COMMAND runs (exec) is watched too; the report is for the process that\n"
    "allocated the most, with a line for each other. DIR receives report.txt (the report,\n"
    "also printed), drag.json (its figures and sites, format strata-drag-1), program.trace\n"
    "and program.trace.<pid> (the recorded traces), last-use.<pid>.bin (the tool's last\n"
    "uses), curves.csv and drag.png / drag.svg (the two curves), ideal.trace (that process\n"
    "with every object freed right after its last use: `strata compare` on its trace and\n"
    "ideal.trace shows what each allocator needs with perfect freeing), valgrind.<pid>.log,\n"
    "and last report.html (everything on one page, drawn from drag.json and curves.csv).\n"
    "The program runs several to tens of times slower than natively (Valgrind). A program\n"
    "that crashes is analysed up to the crash. A process forked without exec is not analysed\n"
    "(its objects are its parent's).\n"
    "\n"
    "Exit status: 0 when the analysis was written (also for a program that failed or\n"
    "crashed: the report says so); 1 when it could not be (nothing recorded, the program\n"
    "allocated nothing, DIR not writable, or report.html failed: the other files are\n"
    "written); 2 for a wrong invocation, or when Valgrind or Strata's recorder or drag tool\n"
    "is missing; 127 when COMMAND is not found.\n"
    "\n"
    "example: strata drag -o gcc.drag --sites -- gcc -c hello.c\n";

std::vector<support::Option> optionTable(drag::DragRequest& r) {
  return {
      {.name = "--output", .shortName = "-o", .value = "DIR",
       .help = "where everything goes (default: <name of COMMAND>.drag here)",
       .bind = [&r](const std::string& v) {
         if (v.empty()) throw support::UsageError("the output DIR is empty");
         r.dir = v;
       },
       .needs = "a DIR"},
      {.name = "--sites", .help = "record allocation sites too, for the table of sites by drag",
       .bind = r.sites},
      {.name = "--top", .value = "N", .help = "sites shown and in drag.json (default 10)",
       .bind = [&r](const std::string& v) {
         const std::optional<std::uint64_t> n = support::parseUnsigned(v);
         if (!n || *n == 0)
           throw support::UsageError("--top takes a positive number, not '" + v + "'");
         r.top = static_cast<std::size_t>(*n);
       },
       .needs = "a number"},
  };
}

const std::string kHelp = [] {
  drag::DragRequest unused;
  return std::string(kUsage) + support::formatOptions(optionTable(unused), 25) +
         std::string(kAfterOptions);
}();

// Parses the arguments; throws support::UsageError.
drag::DragRequest parseRequest(std::span<char* const> args) {
  drag::DragRequest r;
  const std::vector<support::Option> table = optionTable(r);
  r.command = commandAfterDashDash(support::parseOptions(args, table), "measure");
  if (r.dir.empty()) r.dir = support::baseName(r.command[0]) + ".drag";
  return r;
}

int runDrag(std::span<char* const> args) {
  drag::DragRequest request = parseRequest(args);
  const drag::DragSetup setup = drag::prepareDrag(request);
  std::fprintf(stderr, "strata drag: running %s under Valgrind (slow: every load and store is "
               "watched)\n", support::shellLine(request.command).c_str());
  const support::ProcessResult ran = drag::runUnderTool(request, setup);
  DragRunFacts facts{support::shellLine(request.command), support::describeStatus(ran),
                     ran.wallSeconds, ran.succeeded(), request.dir, request.top, {}};
  std::vector<DragProcess> processes = drag::tracesWritten(facts);
  const drag::DragReport report = drag::analyse(facts, processes);
  std::fputs(report.text.c_str(), stdout);
  std::fflush(stdout);
  const std::string curves = (request.dir / "curves.csv").string();
  if (!report.plot.drawn())
    std::fprintf(stderr, "strata drag: the plot %s; the curves are in %s\n",
                 report.plot.problem().c_str(), curves.c_str());
  // Last, once every file it embeds is written: an error here loses none of them.
  std::printf("report: %s\n", report::writeReport(request.dir).c_str());
  return 0;
}

}  // namespace

const Command kDragCommand{"drag", "measure the memory a program holds after its objects' last "
                           "use", kHelp, &runDrag};

}  // namespace strata::cli
