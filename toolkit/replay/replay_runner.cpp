// runReplay(): one replay in a strata-replayer child process under the allocator's
// LD_PRELOAD, and the files that carry its result back (result_file.hpp); toJson().
#include "replay_runner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

#include "allocator_spec.hpp"
#include "engine.hpp"
#include "measure.hpp"
#include "result_file.hpp"
#include "strata/trace/reader.hpp"
#include "helpers.hpp"
#include "json.hpp"
#include "proc.hpp"
#include "process.hpp"


namespace strata::replay {
namespace {

using support::jsonString;

// Formats a double for JSON, the result file and the series: 10 significant digits (ns for
// times under 10 s), finite only.
std::string number(double v) {
  if (!std::isfinite(v)) return "0";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}



// Checks that the trace opens and that its header and first chunk read; throws
// std::runtime_error "PATH: reason" otherwise, before any child is started.
void precheckTrace(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
  trace::TraceReader<trace::FdSource> r(trace::FdSource{fd});
  trace::Event e;
  const trace::ReadStatus s = r.next(e);
  ::close(fd);
  if (s == trace::ReadStatus::Error) throw std::runtime_error(path + ": " + r.error().message());
}

// A private temporary file name for the child's result (created empty, mode 0600).
std::string makeTempFile() {
  const char* dir = std::getenv("TMPDIR");
  std::string tmpl = std::string(dir != nullptr && dir[0] != '\0' ? dir : "/tmp") +
                     "/strata-replay-XXXXXX";
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw std::runtime_error("cannot create a temporary file in " + tmpl + ": " +
                                       std::strerror(errno));
  ::close(fd);
  return tmpl;
}

// The measured figures of a ReplayResult, in the order the result file and the JSON list
// them: the one list toKeyValues, fromKeyValues and toJson follow. Each is a count or a
// double; heap_limit_hit is derived from the status and appears in the JSON only.
struct Figure {
  const char* key;
  std::uint64_t ReplayResult::*count;  // or nullptr
  double ReplayResult::*real;          // or nullptr
};
constexpr Figure kFigures[] = {
    {"events", &ReplayResult::events, nullptr},
    {"objects", &ReplayResult::objects, nullptr},
    {"threads", &ReplayResult::threads, nullptr},
    {"threads_started", &ReplayResult::threadsStarted, nullptr},
    {"recorded_threads", &ReplayResult::recordedThreads, nullptr},
    {"wall_seconds", nullptr, &ReplayResult::wallSeconds},
    {"cpu_seconds", nullptr, &ReplayResult::cpuSeconds},
    {"allocator_seconds", nullptr, &ReplayResult::allocatorSeconds},
    {"peak_heap_bytes", &ReplayResult::peakHeapBytes, nullptr},
    {"startup_heap_bytes", &ReplayResult::startupHeapBytes, nullptr},
    {"library_resident_bytes", &ReplayResult::libraryResidentBytes, nullptr},
    {"peak_live_bytes", &ReplayResult::peakLiveBytes, nullptr},
    {"fragmentation_percent", nullptr, &ReplayResult::fragmentationPercent},
    {"heap_limit_hit", nullptr, nullptr},
    {"failed_allocations", &ReplayResult::failedAllocations, nullptr},
    {"failed_events", &ReplayResult::failedEvents, nullptr},
    {"verify_errors", &ReplayResult::verifyErrors, nullptr},
};

// One figure of r as text (JSON and the result file write numbers alike).
std::string figureText(const ReplayResult& r, const Figure& f) {
  if (f.count != nullptr) return std::to_string(r.*f.count);
  if (f.real != nullptr) return number(r.*f.real);
  return r.status == ReplayStatus::HeapLimit ? "true" : "false";
}

}  // namespace

namespace {

// The edge texts of the enums, in enumerator order.
constexpr const char* kStatusNames[] = {"ok",          "heap-limit", "out-of-memory", "crashed",
                                        "unavailable", "error",      "trace-error"};
constexpr const char* kThreadModeNames[] = {"", "lifecycle", "pool", "single"};

// The enumerator whose text is `text`, from a table in enumerator order.
template <class Enum, std::size_t N>
bool parseName(std::string_view text, const char* const (&names)[N], Enum& out) noexcept {
  for (std::size_t i = 0; i < N; ++i)
    if (text == names[i]) {
      out = static_cast<Enum>(i);
      return true;
    }
  return false;
}

}  // namespace

const char* statusName(ReplayStatus s) noexcept {
  const auto i = static_cast<std::size_t>(s);
  return i < std::size(kStatusNames) ? kStatusNames[i] : "error";
}

bool parseStatus(std::string_view text, ReplayStatus& out) noexcept {
  return parseName(text, kStatusNames, out);
}

const char* threadModeName(ThreadMode m) noexcept {
  const auto i = static_cast<std::size_t>(m);
  return i < std::size(kThreadModeNames) ? kThreadModeNames[i] : "";
}

bool parseThreadMode(std::string_view text, ThreadMode& out) noexcept {
  return parseName(text, kThreadModeNames, out);
}

std::string toKeyValues(const ReplayResult& r) {
  std::string s;
  auto line = [&](const char* k, const std::string& v) {
    s += k;
    s += '=';
    for (const char c : v) s += (c == '\n' ? ' ' : c);
    s += '\n';
  };
  line("status", statusName(r.status));
  line("detail", r.detail);
  line("thread_mode", threadModeName(r.threadMode));
  for (const Figure& f : kFigures)
    if (f.count != nullptr || f.real != nullptr) line(f.key, figureText(r, f));
  return s;
}

bool fromKeyValues(const std::string& text, ReplayResult& r) {
  std::istringstream in(text);
  std::string line;
  bool sawStatus = false;
  while (std::getline(in, line)) {
    const std::size_t eq = line.find('=');
    if (eq == std::string::npos) return false;
    const std::string k = line.substr(0, eq), v = line.substr(eq + 1);
    auto u64 = [&](std::uint64_t& out) {
      char* end = nullptr;
      errno = 0;
      out = std::strtoull(v.c_str(), &end, 10);
      return errno == 0 && !v.empty() && *end == '\0';
    };
    auto dbl = [&](double& out) {
      char* end = nullptr;
      out = std::strtod(v.c_str(), &end);
      return !v.empty() && *end == '\0';
    };
    bool ok = true;
    if (k == "status") {
      ok = parseStatus(v, r.status);
      sawStatus = true;
    } else if (k == "detail") {
      r.detail = v;
    } else if (k == "thread_mode") {
      ok = parseThreadMode(v, r.threadMode);
    } else {
      for (const Figure& f : kFigures) {
        if (k != f.key) continue;
        if (f.count != nullptr) ok = u64(r.*f.count);
        else if (f.real != nullptr) ok = dbl(r.*f.real);
      }
    }
    if (!ok) return false;
  }
  return sawStatus;
}

std::string seriesCsv(const std::vector<ReplaySample>& series) {
  std::string s = "seconds,event,heap_bytes,live_bytes\n";
  for (const ReplaySample& p : series)
    s += number(p.seconds) + "," + std::to_string(p.event) + "," + std::to_string(p.heapBytes) +
         "," + std::to_string(p.liveBytes) + "\n";
  return s;
}

bool parseSeriesCsv(const std::string& text, std::vector<ReplaySample>& out) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != "seconds,event,heap_bytes,live_bytes") return false;
  while (std::getline(in, line)) {
    ReplaySample p;
    unsigned long long e = 0, h = 0, l = 0;
    char tail = 0;
    if (std::sscanf(line.c_str(), "%lf,%llu,%llu,%llu%c", &p.seconds, &e, &h, &l, &tail) != 4)
      return false;
    p.event = e;
    p.heapBytes = h;
    p.liveBytes = l;
    out.push_back(p);
  }
  return true;
}

bool writeTextFile(const std::string& path, const std::string& text) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return false;
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  return std::fclose(f) == 0 && ok;
}

bool readTextFile(const std::string& path, std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  text = ss.str();
  return true;
}

ReplayResult runReplay(const ReplayOptions& options, const registry::SearchDirs& dirs) {
  ReplayResult res;
  res.allocator = options.allocator;
  registry::AllocatorSpec allocator;
  if (const std::string err = registry::parseSpec(options.allocator, allocator, true); !err.empty()) {
    res.status = ReplayStatus::Unavailable;
    res.detail = err;
    return res;
  }
  res.allocator = allocator.label;
  const bool none = allocator.isNone;
  precheckTrace(options.tracePath);

  const registry::ResolvedAllocator resolved = registry::resolve(allocator, dirs);
  if (!resolved.available) {
    res.status = ReplayStatus::Unavailable;
    res.detail = resolved.detail;
    return res;
  }
  if (const registry::ProbeResult p = registry::probe(resolved); !p.ok) {
    res.status = ReplayStatus::Error;
    res.detail = p.reason;
    return res;
  }
  const std::string preload = resolved.preload;
  res.library = preload;
  if (!support::helperPresent(support::HelperId::Replayer)) {
    res.status = ReplayStatus::Error;
    res.detail = "the replay program " + support::helperMissing(support::HelperId::Replayer);
    return res;
  }
  const std::string replayer = support::helperPath(support::HelperId::Replayer);

  // The heap baseline: the replayer without any allocator, measured once per process (it is
  // the same for every replay). Unmeasurable: the replayer measures from its replay's start.
  static std::uint64_t baseline = 0;
  static bool haveBaseline = false;
  if (!haveBaseline) {
    std::string error;
    haveBaseline = baselineFromChild(replayer, baseline, error);
  }

  const std::string resultPath = makeTempFile();
  std::vector<std::string> args = {replayer, "--trace", options.tracePath, "--result", resultPath,
                                   "--allocator", none ? "none" : "system", "--threads",
                                   std::to_string(options.threads), "--heap-limit",
                                   std::to_string(options.heapLimit)};
  if (haveBaseline) {
    args.push_back("--baseline");
    args.push_back(std::to_string(baseline));
  }
  if (!options.writeObjects) args.push_back("--no-write");
  if (options.verify) args.push_back("--verify");
  if (!options.seriesPath.empty()) {
    args.push_back("--series");
    args.push_back(options.seriesPath);
  }
  // The child: this process's environment with the allocator in front of LD_PRELOAD, its
  // standard streams inherited (the replayer reports only on stderr, and rarely).
  support::ChildSpec spec;
  spec.argv = args;
  spec.preload = preload;
  registry::addSettings(allocator, spec.set);
  spec.stdinPath.clear();
  const support::ProcessResult run = support::runChild(spec);
  std::string text;
  const bool haveResult = readTextFile(resultPath, text) && !text.empty();
  ::unlink(resultPath.c_str());

  if (!run.started) {
    res.status = ReplayStatus::Error;
    res.detail = "cannot start " + replayer + ": " + support::describeStatus(run);
    return res;
  }
  if (run.signal != 0) {
    res.status = ReplayStatus::Crashed;
    res.detail = "the replay was killed by " + support::signalName(run.signal) + " (" +
                 ::strsignal(run.signal) + ")";
    return res;
  }
  if (run.exitCode != 0 || !haveResult) {
    res.status = ReplayStatus::Error;
    res.detail = "strata-replayer exited with status " + std::to_string(run.exitCode) +
                 (haveResult ? "" : " and wrote no result");
    return res;
  }
  ReplayResult child;
  if (!fromKeyValues(text, child)) {
    res.status = ReplayStatus::Error;
    res.detail = "strata-replayer wrote a malformed result";
    return res;
  }
  if (child.status == ReplayStatus::TraceError)
    throw std::runtime_error(options.tracePath + ": " + child.detail);
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

std::string threadModeText(const ReplayResult& r) {
  if (r.threadMode == ThreadMode::Lifecycle)
    return "as recorded: " + std::to_string(r.threadsStarted) +
           " threads started and ended where the program's were, at most " +
           std::to_string(r.threads) + " at once";
  if (r.threadMode == ThreadMode::Pool)
    return "fixed pool: recorded thread t on replay thread t % " + std::to_string(r.threads) +
           ", the trace has no thread start and end events or --threads was given";
  if (r.threadMode == ThreadMode::Single) return "one thread, in trace order";
  return "not replayed";
}

std::string toJson(const ReplayResult& r) {
  std::string s = "{";
  auto field = [&](const char* k, const std::string& v, bool last = false) {
    s += "\"";
    s += k;
    s += "\": ";
    s += v;
    if (!last) s += ", ";
  };
  field("allocator", jsonString(r.allocator));
  field("library", jsonString(r.library));
  field("status", jsonString(statusName(r.status)));
  field("detail", jsonString(r.detail));
  field("thread_mode", jsonString(threadModeName(r.threadMode)));
  for (const Figure& f : kFigures) field(f.key, figureText(r, f), &f == std::end(kFigures) - 1);
  return s + "}";
}

}  // namespace strata::replay
