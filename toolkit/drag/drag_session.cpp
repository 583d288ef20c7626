// `strata drag`'s run (drag_session.hpp).
#include "drag/drag_session.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>

#include "drag/drag_analysis.hpp"
#include "drag/drag_ideal_trace.hpp"
#include "drag/drag_last_use.hpp"
#include "support/error.hpp"
#include "support/helpers.hpp"
#include "record/record_session.hpp"
#include "strata/protocol/recorder_environment.hpp"
#include "tracetools/trace_files.hpp"

namespace strata::drag {

namespace fs = std::filesystem;
namespace env = protocol::env;

namespace {

// DIR made, writable, and emptied of an earlier run's files.
void prepareDir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || ::access(dir.c_str(), W_OK) != 0)
    throw support::Error("cannot write to " + dir.string() + ": " +
                         (ec ? ec.message() : std::string(std::strerror(errno))));
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    for (const char* stale : {"program.trace", "last-use.", "valgrind.", "ideal.trace",
                              "curves.csv", "drag.png", "drag.svg", "report.txt", "drag.json",
                              "report.html"})
      if (name.starts_with(stale)) fs::remove(entry.path(), ec);
  }
}

}  // namespace

DragSetup prepareDrag(DragRequest& request) {
  std::string why;
  if (support::resolveCommand(request.command[0], why).empty())
    throw support::Error(request.command[0] + ": " + why, why == "command not found" ? 127 : 126);
  std::string recorder = record::recorderLibrary();
  std::optional<DragRun> run =
      DragRun::prepare(support::helperPath(support::HelperId::DragTool), why);
  if (!run) throw support::Error(why, 2);
  prepareDir(request.dir);
  request.dir = fs::absolute(request.dir);
  return DragSetup{std::move(recorder), std::move(*run)};
}

support::ProcessResult runUnderTool(const DragRequest& request, const DragSetup& setup) {
  support::ChildSpec spec;
  spec.argv = setup.run.argvEveryProcess(request.dir, request.command);
  spec.set = setup.run.environment();
  record::RecordSettings settings;
  settings.sites = request.sites;
  settings.drag = true;
  const std::vector<std::string> recorder =
      record::recorderEnvironment((request.dir / "program.trace").string(), settings);
  spec.set.insert(spec.set.end(), recorder.begin(), recorder.end());
  // The recorder's own choices: the first process names itself the owner of program.trace,
  // and the clock is the default one.
  spec.unset = {env::kOwnerPid, env::kClock};
  spec.preload = setup.recorder;
  spec.stdinPath.clear();  // the program's own stdin, stdout and stderr
  support::ProcessResult ran = support::runChild(spec);
  if (!ran.started)
    throw support::Error("cannot run " + setup.run.valgrind().program + ": " +
                         std::strerror(ran.startErrno), 2);
  return ran;
}

std::vector<DragProcess> tracesWritten(const DragRunFacts& facts) {
  const std::string main = (facts.dir / "program.trace").string();
  std::vector<std::string> files;
  if (fs::exists(main)) files.push_back(main);
  for (const std::string& child : trace::childTraces(main)) files.push_back(child);
  std::vector<DragProcess> out;
  for (const std::string& file : files) {
    const tracetools::TraceProgram program = tracetools::readTraceProgram(file);
    DragProcess p;
    p.trace = file;
    p.pid = program.pid;
    p.program = program.path;
    out.push_back(std::move(p));
  }
  if (out.empty())
    throw support::Error(facts.command + " (" + facts.status + ") recorded nothing: the recorder "
                         "did not start (a statically linked program ignores LD_PRELOAD); "
                         "Valgrind's messages are in " + facts.dir.string() + "/valgrind.*.log");
  return out;
}

DragReport analyse(DragRunFacts& facts, std::vector<DragProcess>& processes) {
  const DragProcess* best = nullptr;
  std::size_t skippedNoTool = 0, skippedNothing = 0;
  std::string firstError;
  DragOptions options;
  options.tempDir = facts.dir.string();  // the sorts' temporary files, removed when done
  for (DragProcess& p : processes) {
    const std::string lastUse = DragRun::lastUseFile(facts.dir, p.pid);
    if (!fs::exists(lastUse)) {  // a fork child that did not exec, or not under Valgrind
      ++skippedNoTool;
      continue;
    }
    try {
      p.lastUse = readLastUseFile(lastUse);
      p.result = analyzeDrag(p.trace, p.lastUse, options);
      p.analysed = true;
      if (best == nullptr || p.result.finalClock > best->result.finalClock) best = &p;
    } catch (const NothingAllocated&) {
      ++skippedNothing;
    } catch (const std::exception& e) {
      if (firstError.empty()) firstError = e.what();
    }
  }
  if (best == nullptr)
    throw support::Error(std::string(!firstError.empty() ? firstError
                                     : skippedNoTool != 0 && skippedNothing == 0
                                         ? "no process ran under the drag tool (see valgrind.*.log)"
                                         : "the program allocated nothing") +
                         " (the program: " + facts.status + ")");
  if (!firstError.empty()) facts.notes.push_back("a process was not analysed: " + firstError);
  if (skippedNoTool != 0)
    facts.notes.push_back(std::to_string(skippedNoTool) + " processes were not analysed (forked "
                          "without exec: their objects are the parent's)");
  const IdealTraceCounts ideal = writeIdealTrace(
      best->trace, best->lastUse, best->result, facts.dir / "ideal.trace", options);
  return writeDragReport(facts, processes, *best, ideal);
}

}  // namespace strata::drag
