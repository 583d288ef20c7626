// The tables and the JSON of `strata compare` (see compare_report.hpp).
#include "compare/compare_report.hpp"
#include "compare/compare_format.hpp"
#include "compare/compare_json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
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

namespace {

// One allocator's median replay, its runs and its ratio.
void writeRow(support::JsonWriter& w, const AllocatorRow& r) {
  const replay::ReplayResult& m = r.median;
  w.object().field("allocator", r.allocator).field("status", replayStatusText(m));
  w.field("detail", m.detail).field("library", m.library);
  w.field("time_ms", m.wallSeconds * 1000.0).field("cpu_ms", m.cpuSeconds * 1000.0);
  w.field("allocator_ms", m.allocatorSeconds * 1000.0);
  w.field("ratio_basis", replayTimesAllocator(m) ? "allocator" : "wall");
  w.field("ratio", r.ratio > 0 ? std::optional(r.ratio) : std::nullopt);
  w.array("wall_seconds_runs", r.wallRuns).array("cpu_seconds_runs", r.cpuRuns);
  w.field("peak_heap_bytes", m.peakHeapBytes).field("peak_live_bytes", m.peakLiveBytes);
  w.field("fragmentation_percent", m.fragmentationPercent);
  w.field("events", m.events).field("objects", m.objects).field("threads", m.threads);
  w.field("thread_mode", replay::threadModeName(m.threadMode));
  w.field("threads_started", m.threadsStarted).field("startup_heap_bytes", m.startupHeapBytes);
  w.field("failed_allocations", m.failedAllocations).field("series_file", r.seriesFile).end();
}

// One trace: where it is, its process, its statistics and a row per allocator.
void writeTrace(support::JsonWriter& w, const TraceReport& tr) {
  const tracetools::TraceStats& st = tr.stats;
  w.object().field("name", tr.name).field("path", tr.path).field("description", tr.description);
  w.field("stats_file", tr.statsFile);
  if (!tr.sitesFile.empty()) w.field("sites_file", tr.sitesFile);
  w.field("program", tr.program).field("pid", tr.pid).field("parent_pid", tr.parentPid);
  w.object("stats").field("events", st.events).field("threads", st.threads);
  w.field("total_objects", st.totalObjects).field("max_live_objects", st.maxLiveObjects);
  w.field("total_bytes", st.totalBytes).field("peak_live_bytes", st.peakLiveBytes);
  w.field("duration_ns", st.durationNs).array("sizes_log2", st.sizes.counts);
  w.array("lifetime_bytes_log2", st.lifetimeBytes.counts);
  w.array("lifetime_ns_log2", st.lifetimeNs.counts).end();
  w.array("results");
  for (const AllocatorRow& r : tr.rows) writeRow(w, r);
  w.end().end();
}

}  // namespace

std::string resultsJson(const CompareSettings& settings, const std::vector<TraceReport>& traces,
                        const CommandReport* command) {
  support::JsonWriter w(kJsonDigits);
  w.object().field("format", "strata-compare-1").field("out_dir", settings.outDir);
  w.field("source", settings.source).field("runs", settings.runs);
  w.field("threads", settings.threads).field("heap_limit_bytes", settings.heapLimit);
  w.field("live", settings.live);
  if (settings.source == "workloads") w.field("size", settings.size).field("seed", settings.seed);
  w.array("traces");
  for (const TraceReport& tr : traces) writeTrace(w, tr);
  w.end();
  if (command != nullptr) writeCommand(w, *command, traces);
  return w.end().text();
}

}  // namespace strata::compare

