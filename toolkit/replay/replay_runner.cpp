// runReplay(): one replay in a strata-replayer child process under the allocator's
// LD_PRELOAD, its result read back from the files the child writes (result_file.hpp).
#include "replay/replay_runner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "support/error.hpp"
#include "support/helpers.hpp"
#include "replay/measure.hpp"
#include "support/process.hpp"
#include "replay/result_file.hpp"
#include "strata/trace/reader.hpp"

namespace strata::replay {
namespace {

// Checks that the trace opens and that its header and first chunk read; throws
// support::Error "PATH: reason" otherwise, before any child is started.
void precheckTrace(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw support::Error(path + ": cannot open: " + std::strerror(errno));
  trace::TraceReader<trace::FdSource> r(trace::FdSource{fd});
  trace::Event e;
  const trace::ReadStatus s = r.next(e);
  ::close(fd);
  if (s == trace::ReadStatus::Error) throw support::Error(path + ": " + r.error().message());
}

// A private temporary file name for the child's result (created empty, mode 0600).
std::string makeTempFile() {
  const char* dir = std::getenv("TMPDIR");
  std::string tmpl = std::string(dir != nullptr && dir[0] != '\0' ? dir : "/tmp") +
                     "/strata-replay-XXXXXX";
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw support::Error("cannot create a temporary file in " + tmpl + ": " +
                                   std::strerror(errno));
  ::close(fd);
  return tmpl;
}

// The heap baseline: the replayer without any allocator, measured once per process (it is
// the same for every replay; tried again while it cannot be measured). Unset: the replayer
// measures from its replay's start.
std::optional<std::uint64_t> processBaseline(const std::string& replayer) {
  static std::optional<std::uint64_t> baseline;
  if (!baseline) baseline = baselineFromChild(replayer).bytes;
  return baseline;
}

// The replayer's command line for one replay.
std::vector<std::string> replayerArgs(const std::string& replayer, const ReplayOptions& options,
                                      bool none, const std::string& resultPath,
                                      std::optional<std::uint64_t> baseline) {
  std::vector<std::string> args = {replayer, "--trace", options.tracePath, "--result", resultPath,
                                   "--allocator", none ? "none" : "system", "--threads",
                                   std::to_string(options.threads), "--heap-limit",
                                   std::to_string(options.heapLimit)};
  if (baseline) {
    args.push_back("--baseline");
    args.push_back(std::to_string(*baseline));
  }
  if (!options.writeObjects) args.push_back("--no-write");
  if (options.verify) args.push_back("--verify");
  if (!options.seriesPath.empty()) {
    args.push_back("--series");
    args.push_back(options.seriesPath);
  }
  return args;
}

// res with a status that ends the replay before it ran (or without a result).
ReplayResult stopped(ReplayResult res, ReplayStatus status, std::string detail) {
  res.status = status;
  res.detail = std::move(detail);
  return res;
}

// What the child's end and its result file (text; empty when it wrote none) say. res holds
// the allocator and library to report; a trace the child could not read throws.
ReplayResult childResult(const support::ProcessResult& run, const std::string& text,
                         const std::string& replayer, const ReplayOptions& options,
                         const ReplayResult& res) {
  if (!run.started)
    return stopped(res, ReplayStatus::Error,
                   "cannot start " + replayer + ": " + support::describeStatus(run));
  if (run.signal != 0)
    return stopped(res, ReplayStatus::Crashed,
                   "the replay was killed by " + support::signalName(run.signal) + " (" +
                       ::strsignal(run.signal) + ")");
  if (run.exitCode != 0 || text.empty())
    return stopped(res, ReplayStatus::Error,
                   "strata-replayer exited with status " + std::to_string(run.exitCode) +
                       (!text.empty() ? "" : " and wrote no result"));
  ReplayResult child;
  if (!fromKeyValues(text, child))
    return stopped(res, ReplayStatus::Error, "strata-replayer wrote a malformed result");
  if (child.status == ReplayStatus::TraceError)
    throw support::Error(options.tracePath + ": " + child.detail);
  child.allocator = res.allocator;
  child.library = res.library;
  if (!options.seriesPath.empty()) {
    std::string csv;
    if (!readTextFile(options.seriesPath, csv) || !parseSeriesCsv(csv, child.series)) {
      child.status = ReplayStatus::Error;
      child.detail = "cannot read the series " + options.seriesPath;
    }
  }
  return child;
}

}  // namespace

ReplayResult runReplay(const ReplayOptions& options, const registry::ResolvedAllocator& allocator) {
  ReplayResult res;
  res.allocator = allocator.spec.label;
  precheckTrace(options.tracePath);
  if (!allocator.available) return stopped(res, ReplayStatus::Unavailable, allocator.detail);
  if (const registry::ProbeResult p = registry::probe(allocator); !p.ok)
    return stopped(res, ReplayStatus::Error, p.reason);
  res.library = allocator.preload;
  if (!support::helperPresent(support::HelperId::Replayer))
    return stopped(res, ReplayStatus::Error,
                   "the replay program " + support::helperMissing(support::HelperId::Replayer));
  const std::string replayer = support::helperPath(support::HelperId::Replayer);
  const std::optional<std::uint64_t> baseline = processBaseline(replayer);

  const std::string resultPath = makeTempFile();
  // The child: this process's environment with the allocator in front of LD_PRELOAD, its
  // standard streams inherited (the replayer reports only on stderr, and rarely).
  support::ChildSpec spec;
  spec.argv = replayerArgs(replayer, options, allocator.spec.isNone, resultPath, baseline);
  spec.preload = allocator.preload;
  registry::addSettings(allocator.spec, spec.set);
  spec.stdinPath.clear();
  const support::ProcessResult run = support::runChild(spec);
  std::string text;
  if (!readTextFile(resultPath, text)) text.clear();
  ::unlink(resultPath.c_str());
  return childResult(run, text, replayer, options, res);
}

}  // namespace strata::replay
