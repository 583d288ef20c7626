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

}  // namespace

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
    if (r.median.status == replay::ReplayStatus::Ok && (fastest == 0 || r.median.wallSeconds < fastest))
      fastest = r.median.wallSeconds;
  for (AllocatorRow& r : trace.rows)
    r.ratio = (r.median.status == replay::ReplayStatus::Ok && fastest > 0) ? r.median.wallSeconds / fastest : 0;
}

std::string formatTable(const TraceReport& trace) {
  const tracetools::TraceStats& st = trace.stats;
  std::string out = "== " + trace.name;
  if (!trace.description.empty()) out += ": " + trace.description;
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
                       format("%.1f", m.fragmentationPercent), replay::statusName(m.status)});
    } else {
      cells.push_back({r.allocator, "-", "-", "-", "-", "-", replay::statusName(m.status)});
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
    if (r.median.status != replay::ReplayStatus::Ok) continue;
    if (fastest == nullptr || r.median.wallSeconds < fastest->median.wallSeconds) fastest = &r;
    if (smallest == nullptr || r.median.peakHeapBytes < smallest->median.peakHeapBytes)
      smallest = &r;
  }
  out += "\n";
  if (fastest != nullptr)
    out += "   fastest: " + fastest->allocator + "; smallest heap: " + smallest->allocator + " (" +
           mib(smallest->median.peakHeapBytes) + " MiB, " +
           format("%.1f", smallest->median.fragmentationPercent) + "% over peak live)\n";
  for (const AllocatorRow& r : trace.rows) {
    if (r.median.status == replay::ReplayStatus::Ok || r.median.detail.empty()) continue;
    out += "   " + r.allocator + " " + replay::statusName(r.median.status) + ": " + r.median.detail + "\n";
  }
  return out;
}

std::string resultsJson(const CompareSettings& settings, const std::vector<TraceReport>& traces) {
  std::string j = "{\n";
  j += "  \"format\": \"strata-compare-1\",\n";
  j += "  \"out_dir\": " + jsonString(settings.outDir) + ",\n";
  j += "  \"source\": " + jsonString(settings.source) + ",\n";
  j += "  \"runs\": " + std::to_string(settings.runs) + ",\n";
  j += "  \"threads\": " + std::to_string(settings.threads) + ",\n";
  j += "  \"heap_limit_bytes\": " + std::to_string(settings.heapLimit) + ",\n";
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
           ", \"status\": " + jsonString(replay::statusName(m.status)) + ", \"detail\": " + jsonString(m.detail) +
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
  j += traces.empty() ? "]\n" : "\n  ]\n";
  return j + "}\n";
}

}  // namespace strata::cli
