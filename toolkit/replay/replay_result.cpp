// The result types' names at the edges (replay_result.hpp) and the files that carry a result
// from strata-replayer to its parent (result_file.hpp): one list of figures, kFigures, that
// the result file and the JSON both follow.
#include "replay/replay_result.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

#include "support/json_writer.hpp"
#include "replay/result_file.hpp"

namespace strata::replay {
namespace {

// Formats a double for JSON, the result file and the series: 10 significant digits (ns for
// times under 10 s), finite only.
std::string number(double v) {
  if (!std::isfinite(v)) return "0";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
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
  support::JsonWriter w;
  w.object().field("allocator", r.allocator).field("library", r.library);
  w.field("status", statusName(r.status)).field("detail", r.detail);
  w.field("thread_mode", threadModeName(r.threadMode));
  for (const Figure& f : kFigures) {
    if (f.count != nullptr) w.field(f.key, r.*f.count);
    // 10 significant digits as number() writes them, and 0 for what is not finite.
    else if (f.real != nullptr) w.field(f.key, std::isfinite(r.*f.real) ? r.*f.real : 0.0, 10);
    else w.field(f.key, r.status == ReplayStatus::HeapLimit);
  }
  return w.end().text();
}

}  // namespace strata::replay
