// The tables and the JSON of `strata compare` (see compare_report.hpp).
#include "compare_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>

namespace strata::cli {
namespace {

// printf into a std::string.
template <class... Args>
std::string format(const char* fmt, Args... args) {
  char buf[256];
  const int n = std::snprintf(buf, sizeof buf, fmt, args...);
  const std::size_t len = n < 0 ? 0 : static_cast<std::size_t>(n);
  return std::string(buf, std::min(len, sizeof buf - 1));
}

// The printf format for figures whose smallest is `v`: one decimal from 10 up, two from 1,
// three below ("123.4", "2.41", "0.052"), so small traces do not show as 0.0.
const char* decimalsFor(double v) { return v >= 10 || v <= 0 ? "%.1f" : v >= 1 ? "%.2f" : "%.3f"; }

// One figure with the decimals decimalsFor() gives it.
std::string threeDigits(double v) { return format(decimalsFor(v), v); }

constexpr double kMiB = 1024.0 * 1024.0;

// An integer with thousands separators ("1,234,567"), for counts a reader compares by eye.
std::string grouped(std::uint64_t v) {
  std::string digits = std::to_string(v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// A JSON number; null for NaN and infinities, which JSON cannot carry.
std::string jsonNumber(double v) {
  if (!std::isfinite(v)) return "null";
  return format("%.9g", v);
}

// A log2 histogram as a JSON array of counts.
std::string jsonCounts(const tracetools::Log2Histogram& h) {
  std::string s = "[";
  for (std::size_t i = 0; i < h.counts.size(); ++i) {
    if (i != 0) s += ",";
    s += std::to_string(h.counts[i]);
  }
  return s + "]";
}

// A list of seconds as a JSON array.
std::string jsonSeconds(const std::vector<double>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i != 0) s += ",";
    s += jsonNumber(v[i]);
  }
  return s + "]";
}

// Pads `s` to `width` on the left (right-aligned) or the right (left-aligned).
std::string pad(const std::string& s, std::size_t width, bool right) {
  if (s.size() >= width) return s;
  const std::string fill(width - s.size(), ' ');
  return right ? fill + s : s + fill;
}


// A rank correlation as text: two decimals, or "n/a" when it could not be computed.
std::string correlationText(double v) { return std::isfinite(v) ? format("%.2f", v) : "n/a"; }

// Signed MiB with one decimal ("+1.5", "-0.3").
std::string signedMiB(double bytes) { return format("%+.1f", bytes / kMiB); }

// The command's JSON object: the processes compared and skipped, the combined verdict, the
// live runs and the agreement.
std::string commandJson(const CommandReport& c, const std::vector<TraceReport>& traces) {
  std::string j = "{\"command_line\": " + jsonString(c.commandLine) + ",\n    \"processes\": [";
  for (std::size_t i = 0; i < traces.size(); ++i)
    j += (i == 0 ? "" : ", ") + std::string("{\"trace\": ") + jsonString(traces[i].name) +
         ", \"program\": " + jsonString(traces[i].program) +
         ", \"pid\": " + std::to_string(traces[i].pid) +
         ", \"allocated_bytes\": " + std::to_string(traces[i].stats.totalBytes) + "}";
  j += "],\n    \"skipped_processes\": [";
  for (std::size_t i = 0; i < c.skippedProcesses.size(); ++i)
    j += (i == 0 ? "" : ", ") + jsonString(c.skippedProcesses[i]);
  j += "],\n    \"combined\": {\"fastest\": " + jsonString(c.fastest) +
       ", \"smallest_heap\": " + jsonString(c.smallest) + ", \"allocators\": [";
  for (std::size_t i = 0; i < c.combined.size(); ++i) {
    const CombinedRow& r = c.combined[i];
    j += (i == 0 ? "\n      " : ",\n      ") + std::string("{\"allocator\": ") +
         jsonString(r.allocator) + ", \"finished\": " + (r.finished ? "true" : "false") +
         ", \"time_ms\": " + (r.finished ? jsonNumber(r.seconds * 1000.0) : "null") +
         ", \"peak_heap_bytes\": " + (r.finished ? std::to_string(r.peakHeapBytes) : "null") + "}";
  }
  j += "]},\n    \"live\": ";
  if (!c.haveLive) {
    j += "null";
  } else {
    j += "{\"reference\": " + jsonString(c.live.reference) + ", \"results\": [";
    for (std::size_t i = 0; i < c.live.rows.size(); ++i) {
      const LiveRow& r = c.live.rows[i];
      const bool ran = !r.wallRuns.empty();
      j += (i == 0 ? "\n      " : ",\n      ") + std::string("{\"allocator\": ") +
           jsonString(r.allocator) + ", \"status\": " + jsonString(r.status) +
           ", \"detail\": " + jsonString(r.detail) + ", \"exit\": " + jsonString(r.exit) +
           ", \"stdout_matches\": " + (ran ? (r.stdoutMatches ? "true" : "false") : "null") +
           ",\n       \"time_ms\": " + (ran ? jsonNumber(r.wallSeconds * 1000.0) : "null") +
           ", \"cpu_ms\": " + (ran ? jsonNumber(r.cpuSeconds * 1000.0) : "null") +
           ", \"max_rss_bytes\": " + (ran ? std::to_string(r.maxRssBytes) : "null") +
           ", \"wall_seconds_runs\": " + jsonSeconds(r.wallRuns) +
           ", \"cpu_seconds_runs\": " + jsonSeconds(r.cpuRuns) + ", \"max_rss_bytes_runs\": [";
      for (std::size_t k = 0; k < r.rssRuns.size(); ++k)
        j += (k == 0 ? "" : ",") + std::to_string(r.rssRuns[k]);
      j += "], \"stdout_file\": " + jsonString(r.stdoutFile) + "}";
    }
    j += "]}";
  }
  const Agreement& a = c.agreement;
  j += ",\n    \"agreement\": ";
  if (!a.computed) return j + "null}";
  j += "{\"allocators\": " + std::to_string(a.allocators) +
       ", \"heap_rank_correlation\": " + jsonNumber(a.heapRankCorrelation) +
       ", \"time_rank_correlation\": " + jsonNumber(a.timeRankCorrelation) +
       ", \"differences\": [";
  for (std::size_t i = 0; i < a.differences.size(); ++i) {
    const Agreement::Difference& d = a.differences[i];
    j += (i == 0 ? "\n      " : ",\n      ") + std::string("{\"allocator\": ") +
         jsonString(d.allocator) + ", \"predicted_heap_difference_bytes\": " +
         jsonNumber(d.predictedHeapBytes) + ", \"live_rss_difference_bytes\": " +
         jsonNumber(d.liveRssBytes) + ", \"disagrees\": " + (d.disagrees ? "true" : "false") + "}";
  }
  j += "], \"notes\": [";
  for (std::size_t i = 0; i < a.notes.size(); ++i) j += (i == 0 ? "" : ", ") + jsonString(a.notes[i]);
  return j + "]}}";
}

}  // namespace

bool replayOk(const replay::ReplayResult& r) { return r.status == "ok"; }
bool replayFinished(const replay::ReplayResult& r) {
  return r.status == "ok" || r.status == "heap-limit";
}
bool replayUnavailable(const replay::ReplayResult& r) { return r.status == "unavailable"; }
std::string replayStatusText(const replay::ReplayResult& r) { return r.status; }
double replayTime(const replay::ReplayResult& r) { return r.wallSeconds; }

std::string mib(std::uint64_t bytes) {
  return threeDigits(static_cast<double>(bytes) / kMiB);
}

std::string jsonString(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (u < 0x20) out += format("\\u%04x", u);
    else out += c;
  }
  return out + "\"";
}

void computeRatios(TraceReport& trace) {
  double fastest = 0;
  for (const AllocatorRow& r : trace.rows)
    if (replayOk(r.median) && (fastest == 0 || replayTime(r.median) < fastest))
      fastest = replayTime(r.median);
  for (AllocatorRow& r : trace.rows)
    r.ratio = (replayOk(r.median) && fastest > 0) ? replayTime(r.median) / fastest : 0;
}

std::string formatTable(const TraceReport& trace) {
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

  const std::vector<std::string> head = {"allocator", "time ms", "ratio", "peak heap MiB",
                                         "peak live MiB", "frag %", "status"};
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
    } else {
      cells.push_back({r.allocator, "-", "-", "-", "-", "-", replayStatusText(m)});
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
  out += line(head);
  for (const auto& row : cells) out += line(row);

  // The verdict in words, then what to do about each allocator that did not run.
  const AllocatorRow* fastest = nullptr;
  const AllocatorRow* smallest = nullptr;
  for (const AllocatorRow& r : trace.rows) {
    if (!replayOk(r.median)) continue;
    if (fastest == nullptr || replayTime(r.median) < replayTime(fastest->median)) fastest = &r;
    if (smallest == nullptr || r.median.peakHeapBytes < smallest->median.peakHeapBytes)
      smallest = &r;
  }
  out += "\n";
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
           ", \"ratio\": " + (r.ratio > 0 ? jsonNumber(r.ratio) : std::string("null")) +
           ", \"wall_seconds_runs\": " + jsonSeconds(r.wallRuns) +
           ", \"cpu_seconds_runs\": " + jsonSeconds(r.cpuRuns) +
           ",\n         \"peak_heap_bytes\": " + std::to_string(m.peakHeapBytes) +
           ", \"peak_live_bytes\": " + std::to_string(m.peakLiveBytes) +
           ", \"fragmentation_percent\": " + jsonNumber(m.fragmentationPercent) +
           ", \"events\": " + std::to_string(m.events) +
           ", \"objects\": " + std::to_string(m.objects) +
           ", \"threads\": " + std::to_string(m.threads) +
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

}  // namespace strata::cli

namespace strata::cli {

std::string formatCommand(const CommandReport& c, const std::vector<TraceReport>& traces) {
  std::string out = "== the command as a whole";
  if (!c.commandLine.empty()) out += ": " + c.commandLine;
  out += "\n   ";
  if (traces.empty()) out += "live runs only (no replay)";
  else out += std::to_string(traces.size()) + (traces.size() == 1 ? " process" : " processes") +
              " replayed (time summed, the largest peak heap)";
  if (!c.skippedProcesses.empty())
    out += "; " + std::to_string(c.skippedProcesses.size()) +
           " more allocated too little to judge (--all-processes includes them)";
  out += "\n\n";

  std::vector<std::string> head = {"allocator"};
  const bool replayed = !c.combined.empty();
  if (replayed) head.insert(head.end(), {"replay ms", "peak heap MiB"});
  if (c.haveLive) head.insert(head.end(), {"live ms", "cpu ms", "peak RSS MiB", "exit", "stdout"});
  head.push_back("status");
  std::vector<std::vector<std::string>> cells;
  const std::size_t n = std::max(c.combined.size(), c.live.rows.size());
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::string> row;
    const CombinedRow* cr = i < c.combined.size() ? &c.combined[i] : nullptr;
    const LiveRow* lr = c.haveLive && i < c.live.rows.size() ? &c.live.rows[i] : nullptr;
    row.push_back(cr != nullptr ? cr->allocator : lr->allocator);
    std::string status;
    if (replayed) {
      row.push_back(cr->finished ? threeDigits(cr->seconds * 1000.0) : "-");
      row.push_back(cr->finished ? mib(cr->peakHeapBytes) : "-");
      if (!cr->finished) status = "replay failed";
    }
    if (c.haveLive) {
      const bool ran = lr != nullptr && !lr->wallRuns.empty();
      row.push_back(ran ? threeDigits(lr->wallSeconds * 1000.0) : "-");
      row.push_back(ran ? threeDigits(lr->cpuSeconds * 1000.0) : "-");
      row.push_back(ran ? mib(lr->maxRssBytes) : "-");
      row.push_back(ran ? lr->exit : "-");
      row.push_back(!ran ? "-" : lr->allocator == c.live.reference ? "reference"
                    : lr->stdoutMatches ? "same" : "DIFFERS");
      if (lr != nullptr && !lr->ok()) status = status.empty() ? "live " + lr->status : status + ", live " + lr->status;
    }
    row.push_back(status.empty() ? "ok" : status);
    cells.push_back(row);
  }
  std::vector<std::size_t> width(head.size());
  for (std::size_t k = 0; k < head.size(); ++k) {
    width[k] = head[k].size();
    for (const auto& row : cells) width[k] = std::max(width[k], row[k].size());
  }
  const auto line = [&](const std::vector<std::string>& row) {
    std::string l = " ";
    for (std::size_t k = 0; k < row.size(); ++k) {
      const bool last = k + 1 == row.size();
      const bool word = k == 0 || head[k] == "exit" || head[k] == "stdout";
      l += "  " + (last ? row[k] : pad(row[k], width[k], !word));
    }
    return l + "\n";
  };
  out += line(head);
  for (const auto& row : cells) out += line(row);
  out += "\n";
  if (replayed && !c.fastest.empty())
    out += "   replay verdict for the command: fastest " + c.fastest + ", smallest peak heap " +
           c.smallest + "\n";
  if (c.haveLive) {
    const LiveRow* fastest = nullptr;
    const LiveRow* smallest = nullptr;
    for (const LiveRow& r : c.live.rows) {
      if (!r.ok()) continue;
      if (fastest == nullptr || r.wallSeconds < fastest->wallSeconds) fastest = &r;
      if (smallest == nullptr || r.maxRssBytes < smallest->maxRssBytes) smallest = &r;
    }
    if (fastest != nullptr)
      out += "   live verdict: fastest " + fastest->allocator + ", smallest peak RSS " +
             smallest->allocator + " (" + mib(smallest->maxRssBytes) + " MiB)\n";
    for (const LiveRow& r : c.live.rows)
      if (!r.ok() && !r.detail.empty()) out += "   " + r.allocator + " live " + r.status + ": " + r.detail + "\n";
  }
  const Agreement& a = c.agreement;
  if (a.computed) {
    out += "   agreement over " + std::to_string(a.allocators) +
           " allocators: rank correlation of peak heap with peak RSS " +
           correlationText(a.heapRankCorrelation) + ", of replay time with live time " +
           correlationText(a.timeRankCorrelation) + "\n";
    if (!a.differences.empty()) {
      out += "   difference from " + c.live.reference + " (MiB), predicted by the replay / live:";
      for (const Agreement::Difference& d : a.differences)
        out += " " + d.allocator + " " + signedMiB(d.predictedHeapBytes) + "/" +
               signedMiB(d.liveRssBytes) + (d.disagrees ? "!" : "");
      out += "\n";
    }
    for (const std::string& note : a.notes) out += "   " + note + "\n";
  }
  return out;
}

}  // namespace strata::cli
