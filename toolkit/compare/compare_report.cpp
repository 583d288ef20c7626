// The tables and the JSON of `strata compare` (see compare_report.hpp).
#include "compare/compare_report.hpp"
#include "compare/compare_format.hpp"
#include "support/json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>

namespace strata::compare {

using namespace reportfmt;

bool replayOk(const replay::ReplayResult& r) { return r.status == replay::ReplayStatus::Ok; }
bool replayFinished(const replay::ReplayResult& r) {
  return r.status == replay::ReplayStatus::Ok || r.status == replay::ReplayStatus::HeapLimit;
}
bool replayUnavailable(const replay::ReplayResult& r) {
  return r.status == replay::ReplayStatus::Unavailable;
}
std::string replayStatusText(const replay::ReplayResult& r) { return replay::statusName(r.status); }
bool replayTimesAllocator(const replay::ReplayResult& r) {
  return r.threads > 1 && r.allocatorSeconds > 0;
}
const char* liveStatusName(LiveStatus s) {
  switch (s) {
    case LiveStatus::Ok: return "ok";
    case LiveStatus::Failed: return "failed";
    case LiveStatus::Unavailable: return "unavailable";
  }
  return "unknown";
}

double replayTime(const replay::ReplayResult& r) {
  return replayTimesAllocator(r) ? r.allocatorSeconds : r.wallSeconds;
}

std::string mib(std::uint64_t bytes) {
  return threeDigits(static_cast<double>(bytes) / kMiB);
}


void computeRatios(TraceReport& trace) {
  double fastest = 0;
  for (const AllocatorRow& r : trace.rows)
    if (replayOk(r.median) && (fastest == 0 || replayTime(r.median) < fastest))
      fastest = replayTime(r.median);
  for (AllocatorRow& r : trace.rows)
    r.ratio = (replayOk(r.median) && fastest > 0) ? replayTime(r.median) / fastest : 0;
}

namespace {

// The heading: the trace, its process, and its statistics in a line.
std::string traceHeading(const TraceReport& trace) {
  const tracetools::TraceStats& st = trace.stats;
  std::string out = "== " + trace.name;
  if (!trace.description.empty()) out += ": " + trace.description;
  if (!trace.program.empty() || trace.pid != 0)
    out += "\n   process " + std::to_string(trace.pid) +
           (trace.program.empty() ? std::string() : " (" + trace.program + ")") +
           (trace.parentPid != 0 ? ", started by " + std::to_string(trace.parentPid) : std::string());
  out += "\n   " + grouped(st.events) + " events, " + grouped(st.totalObjects) +
         " objects (at most " + grouped(st.maxLiveObjects) + " live), peak live " +
         mib(st.peakLiveBytes) + " MiB, " + grouped(st.threads) +
         (st.threads == 1 ? " thread" : " threads") + "\n\n";
  return out;
}

// The table: a row per allocator, with the time inside allocator calls beside wall time
// when `allocTime`.
std::string traceTable(const TraceReport& trace, bool allocTime) {
  std::vector<std::string> head = {"allocator", "time ms", "ratio", "peak heap MiB",
                                   "peak live MiB", "frag %", "status"};
  if (allocTime) head.insert(head.begin() + 2, "alloc ms");
  // Each column shows as many decimals as its smallest figure needs, the same on every row.
  double minMs = 0, minMiB = 0;
  for (const AllocatorRow& r : trace.rows) {
    if (!r.finished()) continue;
    const double ms = r.median.wallSeconds * 1000.0;
    const double live = static_cast<double>(r.median.peakLiveBytes) / kMiB;
    if (minMs == 0 || ms < minMs) minMs = ms;
    if (minMiB == 0 || live < minMiB) minMiB = live;
  }
  const char* msFormat = decimalsFor(minMs);
  const char* mibFormat = decimalsFor(minMiB);
  std::vector<std::vector<std::string>> cells;
  for (const AllocatorRow& r : trace.rows) {
    const replay::ReplayResult& m = r.median;
    if (r.finished()) {
      cells.push_back({r.allocator, format(msFormat, m.wallSeconds * 1000.0),
                       r.ratio > 0 ? format("%.2fx", r.ratio) : "-",
                       format(mibFormat, static_cast<double>(m.peakHeapBytes) / kMiB),
                       format(mibFormat, static_cast<double>(m.peakLiveBytes) / kMiB),
                       format("%.1f", m.fragmentationPercent), replayStatusText(m)});
      if (allocTime)
        cells.back().insert(cells.back().begin() + 2,
                            replayTimesAllocator(m) ? format("%.2f", m.allocatorSeconds * 1000.0) : "-");
    } else {
      cells.push_back({r.allocator, "-", "-", "-", "-", "-", replayStatusText(m)});
      if (allocTime) cells.back().insert(cells.back().begin() + 2, "-");
    }
  }
  std::vector<std::size_t> width(head.size());
  for (std::size_t c = 0; c < head.size(); ++c) {
    width[c] = head[c].size();
    for (const auto& row : cells) width[c] = std::max(width[c], row[c].size());
  }
  // The first and last columns are words (left-aligned), the others numbers (right-aligned).
  const auto line = [&](const std::vector<std::string>& row) {
    std::string l = " ";
    for (std::size_t c = 0; c < row.size(); ++c) {
      const bool last = c + 1 == row.size();
      l += "  " + (last ? row[c] : pad(row[c], width[c], c != 0));
    }
    return l + "\n";
  };
  std::string out = line(head);
  for (const auto& row : cells) out += line(row);
  return out;

}

// The verdict in words, then what to do about each allocator that did not run.
std::string traceVerdict(const TraceReport& trace, bool allocTime) {
  const AllocatorRow* fastest = nullptr;
  const AllocatorRow* smallest = nullptr;
  for (const AllocatorRow& r : trace.rows) {
    if (!replayOk(r.median)) continue;
    if (fastest == nullptr || replayTime(r.median) < replayTime(fastest->median)) fastest = &r;
    if (smallest == nullptr || r.median.peakHeapBytes < smallest->median.peakHeapBytes)
      smallest = &r;
  }
  std::string out = "\n";
  if (allocTime)
    out += "   ratio: time inside allocator calls, summed over the replay threads (wall time "
           "also holds the waiting for objects other threads create)\n";
  if (fastest != nullptr)
    out += "   fastest: " + fastest->allocator + "; smallest heap: " + smallest->allocator + " (" +
           mib(smallest->median.peakHeapBytes) + " MiB, " +
           format("%.1f", smallest->median.fragmentationPercent) + "% over peak live)\n";
  for (const AllocatorRow& r : trace.rows) {
    if (replayOk(r.median) || r.median.detail.empty()) continue;
    out += "   " + r.allocator + " " + replayStatusText(r.median) + ": " + r.median.detail + "\n";
  }
  return out;
}

}  // namespace

std::string formatTable(const TraceReport& trace) {
  std::string out = traceHeading(trace);
  // Threaded replays rank by the time inside allocator calls (wall time also holds the
  // waiting for objects other replay threads create): its column comes beside wall time.
  const bool allocTime = std::any_of(trace.rows.begin(), trace.rows.end(), [](const AllocatorRow& r) {
    return r.finished() && replayTimesAllocator(r.median);
  });
  out += traceTable(trace, allocTime);
  out += traceVerdict(trace, allocTime);
  if (!trace.sitesTable.empty()) {
    // The program's own figure (what it held at its peak, by the code that allocated it), the
    // same whichever allocator replays it.
    out += "\n   peak live " + mib(trace.stats.peakLiveBytes) +
           " MiB by allocation site, for every allocator alike:\n";
    std::size_t from = 0;
    for (std::size_t nl; (nl = trace.sitesTable.find('\n', from)) != std::string::npos; from = nl + 1)
      out += "   " + trace.sitesTable.substr(from, nl + 1 - from);
  }
  return out;
}

std::string resultsJson(const CompareSettings& settings, const std::vector<TraceReport>& traces,
                        const CommandReport* command) {
  std::string j = "{\n";
  j += "  \"format\": \"strata-compare-1\",\n";
  j += "  \"out_dir\": " + jsonString(settings.outDir) + ",\n";
  j += "  \"source\": " + jsonString(settings.source) + ",\n";
  j += "  \"runs\": " + std::to_string(settings.runs) + ",\n";
  j += "  \"threads\": " + std::to_string(settings.threads) + ",\n";
  j += "  \"heap_limit_bytes\": " + std::to_string(settings.heapLimit) + ",\n";
  j += "  \"live\": " + std::string(settings.live ? "true" : "false") + ",\n";
  if (settings.source == "workloads") {
    j += "  \"size\": " + jsonNumber(settings.size) + ",\n";
    j += "  \"seed\": " + std::to_string(settings.seed) + ",\n";
  }
  j += "  \"traces\": [";
  for (std::size_t t = 0; t < traces.size(); ++t) {
    const TraceReport& tr = traces[t];
    const tracetools::TraceStats& st = tr.stats;
    j += t == 0 ? "\n" : ",\n";
    j += "    {\n";
    j += "      \"name\": " + jsonString(tr.name) + ",\n";
    j += "      \"path\": " + jsonString(tr.path) + ",\n";
    j += "      \"description\": " + jsonString(tr.description) + ",\n";
    j += "      \"stats_file\": " + jsonString(tr.statsFile) + ",\n";
    if (!tr.sitesFile.empty()) j += "      \"sites_file\": " + jsonString(tr.sitesFile) + ",\n";
    j += "      \"program\": " + jsonString(tr.program) + ", \"pid\": " + std::to_string(tr.pid) +
         ", \"parent_pid\": " + std::to_string(tr.parentPid) + ",\n";
    j += "      \"stats\": {\"events\": " + std::to_string(st.events) +
         ", \"threads\": " + std::to_string(st.threads) +
         ", \"total_objects\": " + std::to_string(st.totalObjects) +
         ", \"max_live_objects\": " + std::to_string(st.maxLiveObjects) +
         ", \"total_bytes\": " + std::to_string(st.totalBytes) +
         ", \"peak_live_bytes\": " + std::to_string(st.peakLiveBytes) +
         ", \"duration_ns\": " + std::to_string(st.durationNs) +
         ",\n                \"sizes_log2\": " + jsonCounts(st.sizes) +
         ",\n                \"lifetime_bytes_log2\": " + jsonCounts(st.lifetimeBytes) +
         ",\n                \"lifetime_ns_log2\": " + jsonCounts(st.lifetimeNs) + "},\n";
    j += "      \"results\": [";
    for (std::size_t i = 0; i < tr.rows.size(); ++i) {
      const AllocatorRow& r = tr.rows[i];
      const replay::ReplayResult& m = r.median;
      j += i == 0 ? "\n" : ",\n";
      j += "        {\"allocator\": " + jsonString(r.allocator) +
           ", \"status\": " + jsonString(replayStatusText(m)) + ", \"detail\": " + jsonString(m.detail) +
           ", \"library\": " + jsonString(m.library) +
           ",\n         \"time_ms\": " + jsonNumber(m.wallSeconds * 1000.0) +
           ", \"cpu_ms\": " + jsonNumber(m.cpuSeconds * 1000.0) +
           ", \"allocator_ms\": " + jsonNumber(m.allocatorSeconds * 1000.0) +
           ", \"ratio_basis\": " + jsonString(replayTimesAllocator(m) ? "allocator" : "wall") +
           ", \"ratio\": " + (r.ratio > 0 ? jsonNumber(r.ratio) : std::string("null")) +
           ", \"wall_seconds_runs\": " + jsonSeconds(r.wallRuns) +
           ", \"cpu_seconds_runs\": " + jsonSeconds(r.cpuRuns) +
           ",\n         \"peak_heap_bytes\": " + std::to_string(m.peakHeapBytes) +
           ", \"peak_live_bytes\": " + std::to_string(m.peakLiveBytes) +
           ", \"fragmentation_percent\": " + jsonNumber(m.fragmentationPercent) +
           ", \"events\": " + std::to_string(m.events) +
           ", \"objects\": " + std::to_string(m.objects) +
           ", \"threads\": " + std::to_string(m.threads) +
           ", \"thread_mode\": " + jsonString(replay::threadModeName(m.threadMode)) +
           ", \"threads_started\": " + std::to_string(m.threadsStarted) +
           ", \"startup_heap_bytes\": " + std::to_string(m.startupHeapBytes) +
           ", \"failed_allocations\": " + std::to_string(m.failedAllocations) +
           ",\n         \"series_file\": " + jsonString(r.seriesFile) + "}";
    }
    j += tr.rows.empty() ? "]\n" : "\n      ]\n";
    j += "    }";
  }
  j += traces.empty() ? "]" : "\n  ]";
  if (command != nullptr) j += ",\n  \"command\": " + commandJson(*command, traces);
  return j + "\n}\n";
}

}  // namespace strata::compare

