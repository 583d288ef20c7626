// `strata drag`'s run, apart from parsing and rendering: the command checked, the recorder
// and the Valgrind tool found, the output directory made ready, the command run under the
// tool with the recorder preloaded (strata/protocol/recorder_environment.hpp says how the recorder is
// told), the traces it wrote, and their analysis written as the report (drag_report.hpp).
// Failures are support::Error with `strata drag`'s exit statuses.
#pragma once
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "drag/drag_report.hpp"
#include "support/process.hpp"
#include "drag/valgrind_run.hpp"

namespace strata::drag {

struct DragRequest {
  std::filesystem::path dir;  // where everything goes
  bool sites = false;         // record allocation sites too
  std::size_t top = 10;       // sites shown (and in drag.json)
  std::vector<std::string> command;
};

// What a run needs, found and made ready.
struct DragSetup {
  std::string recorder;  // libstrata-record.so
  DragRun run;           // Valgrind and the tool
};

// Checks the command (127 not found, 126 not executable), finds the recorder and the tool
// (2 when missing), makes DIR (1 when it cannot be written), empties it of an earlier run's
// files and makes request.dir absolute.
DragSetup prepareDrag(DragRequest& request);

// Runs the command under the tool, every program it execs too; returns how it ended
// (support::Error, exit status 2, when Valgrind could not be started).
support::ProcessResult runUnderTool(const DragRequest& request, const DragSetup& setup);

// The traces the run wrote: program.trace (the command's process), then program.trace.<pid>
// (every other process) in pid order, each with the process its program chunk names. Throws
// support::Error when there are none (the recorder did not start).
std::vector<DragProcess> tracesWritten(const DragRunFacts& facts);

// Analyses each process that ran under the tool; the one that allocated the most gets the
// full report, the curves and the ideal trace. Throws support::Error when no process could be
// analysed.
DragReport analyse(DragRunFacts& facts, std::vector<DragProcess>& processes);

}  // namespace strata::drag
