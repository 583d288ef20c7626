// `strata record`'s work outside the recorder (record_session.hpp).
#include "record/record_session.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "support/error.hpp"
#include "support/helpers.hpp"
#include "strata/protocol/recorder_environment.hpp"
#include "strata/trace/reader.hpp"
#include "strata/trace/names.hpp"

namespace strata::record {

namespace env = protocol::env;
using trace::childTraces;
using trace::pidSuffix;
namespace {

// Whether `path` holds data and was modified at or after `since` (this run wrote it).
bool writtenSince(const std::string& path, const timespec& since) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || st.st_size == 0) return false;
  return st.st_mtim.tv_sec > since.tv_sec ||
         (st.st_mtim.tv_sec == since.tv_sec && st.st_mtim.tv_nsec >= since.tv_nsec);
}

// The traces this run wrote: FILE, then FILE.<pid> of the other processes in pid order.
std::vector<RecordedTrace> tracesWritten(const std::string& file, const timespec& since) {
  std::vector<RecordedTrace> out;
  if (writtenSince(file, since)) out.push_back({file, 0});
  for (const std::string& child : childTraces(file))
    if (writtenSince(child, since)) out.push_back({child, pidSuffix(child)});
  return out;
}

// Now, less a tick: file times come from the kernel's coarse clock, a tick behind this one.
timespec startOfRun() {
  timespec start{};
  ::clock_gettime(CLOCK_REALTIME, &start);
  start.tv_nsec -= 50000000;
  if (start.tv_nsec < 0) {
    start.tv_nsec += 1000000000;
    start.tv_sec -= 1;
  }
  return start;
}

// Fails early and clearly when FILE cannot be written (the recorder would only warn); leaves
// it empty, so that a FILE with data afterwards is this run's.
void emptyTraceFile(const std::string& file) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw support::Error("cannot write " + file + ": " + std::strerror(errno));
  ::close(fd);
}

}  // namespace

std::vector<std::string> recorderEnvironment(const std::string& file,
                                             const RecordSettings& settings) {
  const auto entry = [](const char* name, const std::string& value) {
    return std::string(name) + "=" + value;
  };
  std::vector<std::string> out{entry(env::kFile, file)};
  if (!settings.clock.empty()) out.push_back(entry(env::kClock, settings.clock));
  if (settings.sites) out.push_back(entry(env::kSites, env::kOn));
  if (!settings.touchMin.empty()) out.push_back(entry(env::kTouchMin, settings.touchMin));
  if (settings.touchAll) out.push_back(entry(env::kTouchAll, env::kOn));
  if (settings.drag) out.push_back(entry(env::kDrag, env::kOn));
  if (settings.plain) out.push_back(entry(env::kPlain, env::kOn));
  return out;
}

std::string recorderLibrary() {
  using support::HelperId;
  if (!support::helperPresent(HelperId::Recorder))
    throw support::Error("the recorder " + support::helperMissing(HelperId::Recorder), 2);
  std::string library = support::helperPath(HelperId::Recorder);
  if (library.find_first_of(": \t") != std::string::npos)
    throw support::Error("the library path '" + library + "' holds a space or colon, which "
                         "LD_PRELOAD cannot carry", 2);
  return library;
}

std::string absolutePath(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  std::vector<char> cwd(4096);
  while (::getcwd(cwd.data(), cwd.size()) == nullptr) {
    if (errno != ERANGE) return path;
    cwd.resize(cwd.size() * 2);
  }
  std::string dir = cwd.data();
  if (dir.empty() || dir.back() != '/') dir += '/';
  return dir + path;
}

RecordResult recordCommand(const RecordRequest& request) {
  support::ChildSpec spec;
  spec.preload = recorderLibrary();
  RecordResult result;
  result.file = absolutePath(request.file);
  emptyTraceFile(result.file);
  spec.argv = request.command;
  spec.set = recorderEnvironment(result.file, request.settings);
  // The command is the process that writes FILE itself; what it starts writes FILE.<pid>.
  spec.pidVariable = env::kOwnerPid;
  spec.stdinPath.clear();    // the program's own stdin, stdout and stderr
  spec.stdoutPath = request.stdoutPath;
  spec.relaySignals = true;  // strata stays to report and pass the status on
  const timespec start = startOfRun();
  result.process = support::runChild(spec);
  const support::ProcessResult& p = result.process;
  if (!p.started) {
    const std::string& name = request.command[0];
    if (p.shellStatus() == 127) throw support::Error(name + ": command not found", 127);
    throw support::Error("cannot execute " + name + ": " + std::strerror(p.startErrno), 126);
  }
  result.traces = tracesWritten(result.file, start);
  return result;
}

TraceSummary summariseTrace(const std::string& path) {
  TraceSummary s;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    s.error = "cannot read " + path + ": " + std::strerror(errno);
    return s;
  }
  trace::TraceReader<trace::FdSource> reader(trace::FdSource{fd});
  trace::Event e;
  trace::ReadStatus status;
  while ((status = reader.next(e)) == trace::ReadStatus::Event) {
  }
  ::close(fd);
  if (status == trace::ReadStatus::Error) {
    s.error = path + ": " + reader.error().message();
    return s;
  }
  s.events = reader.eventsRead();
  s.objects = reader.objects();
  s.threads = reader.threads();
  s.bytes = reader.bytesRead();
  s.hasSites = reader.hasSites();
  if (s.hasSites) {
    s.sites = reader.sites().siteCount();
    s.modules = reader.sites().moduleCount();
  }
  s.complete = reader.complete();
  return s;
}

std::vector<std::string> runLines(const RecordResult& r, const std::string& name) {
  std::vector<std::string> out;
  const support::ProcessResult& p = r.process;
  if (p.signal != 0)
    out.push_back(name + " was killed by signal " + std::to_string(p.signal) + " (" +
                  ::strsignal(p.signal) + ")");
  else if (p.exitCode != 0)
    out.push_back(name + " exited with status " + std::to_string(p.exitCode));
  if (!r.fileWritten())
    out.push_back(r.file + " was not written: the recorder did not start in " + name +
                  " (a statically linked or set-user-ID program ignores LD_PRELOAD)");
  return out;
}

namespace {

// One trace's line of the summary, or why it does not read.
std::string summaryLine(const RecordedTrace& t) {
  const TraceSummary s = summariseTrace(t.path);
  if (!s.error.empty()) return s.error;
  const std::string process = t.pid != 0 ? " (process " + std::to_string(t.pid) + ")" : "";
  const std::string sites = s.hasSites ? std::to_string(s.sites) + " sites, " +
                                             std::to_string(s.modules) + " modules, "
                                       : "";
  return t.path + process + ": " + std::to_string(s.events) + " events, " +
         std::to_string(s.objects) + " objects, " + std::to_string(s.threads) + " threads, " +
         sites + std::to_string(s.bytes) + " bytes, " +
         (s.complete ? "complete"
                     : "incomplete (no trailer: the process crashed or was killed, or the "
                       "recorder could not write; every event up to its last write is there)");
}

}  // namespace

std::vector<std::string> summaryLines(const RecordResult& r) {
  constexpr std::size_t kListed = 10;
  std::vector<std::string> out;
  std::size_t listed = 0, others = 0;
  for (const RecordedTrace& t : r.traces) {
    if (t.pid == 0 || listed < kListed) {
      if (t.pid != 0) ++listed;
      out.push_back(summaryLine(t));
    } else {
      ++others;
    }
  }
  if (others != 0)
    out.push_back("and " + std::to_string(others) + " more traces " + r.file +
                  ".<pid> from other processes");
  return out;
}

}  // namespace strata::record
