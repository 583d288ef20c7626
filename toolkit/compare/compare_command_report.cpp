// The block for the command as a whole and its JSON (see compare_report.hpp): the combined
// verdict over the processes, the live runs beside the replay's figures, and the agreement.
#include <algorithm>
#include <cmath>

#include "compare/compare_format.hpp"
#include "compare/compare_report.hpp"

namespace strata::compare {

using namespace reportfmt;

namespace {

// A rank correlation as text: two decimals, or "n/a" when it could not be computed.
std::string correlationText(double v) { return std::isfinite(v) ? format("%.2f", v) : "n/a"; }

// Signed MiB with one decimal ("+1.5", "-0.3").
std::string signedMiB(double bytes) { return format("%+.1f", bytes / kMiB); }

}  // namespace

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
         ", \"peak_heap_bytes\": " + (r.finished ? std::to_string(r.peakHeapBytes) : "null") +
         ", \"library_resident_bytes\": " + std::to_string(r.libraryBytes) +
         ", \"predicted_rss_bytes\": " +
         (r.finished ? std::to_string(r.predictedRssBytes()) : "null") + "}";
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
           jsonString(r.allocator) + ", \"status\": " + jsonString(liveStatusName(r.status)) +
           ", \"detail\": " + jsonString(r.detail) + ", \"exit\": " + jsonString(r.exit) +
           ", \"stdout_matches\": " + (ran ? (r.stdoutMatches ? "true" : "false") : "null") +
           ",\n       \"time_ms\": " + (ran ? jsonNumber(r.wallSeconds * 1000.0) : "null") +
           ", \"cpu_ms\": " + (ran ? jsonNumber(r.cpuSeconds * 1000.0) : "null") +
           ", \"max_rss_bytes\": " + (ran ? std::to_string(r.maxRssBytes) : "null") +
           ", \"wall_seconds_runs\": " + jsonSeconds(r.wallRuns) +
           ", \"cpu_seconds_runs\": " + jsonSeconds(r.cpuRuns) + ", \"max_rss_bytes_runs\": [";
      for (std::size_t k = 0; k < r.rssRuns.size(); ++k)
        j += (k == 0 ? "" : ",") + std::to_string(r.rssRuns[k]);
      j += "], \"stdout_file\": " + jsonString(r.stdoutFile);
      if (!r.rssSeriesFile.empty()) j += ", \"rss_series_file\": " + jsonString(r.rssSeriesFile);
      j += "}";
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
         jsonString(d.allocator) + ", \"predicted_rss_difference_bytes\": " +
         jsonNumber(d.predictedHeapBytes) + ", \"live_rss_difference_bytes\": " +
         jsonNumber(d.liveRssBytes) + ", \"disagrees\": " + (d.disagrees ? "true" : "false") + "}";
  }
  j += "], \"notes\": [";
  for (std::size_t i = 0; i < a.notes.size(); ++i) j += (i == 0 ? "" : ", ") + jsonString(a.notes[i]);
  return j + "]}}";
}

namespace {

// A row per allocator: the replay's figures over the processes and the live runs' beside them.
std::string commandTable(const CommandReport& c) {
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
      if (lr != nullptr && !lr->ok()) {
        const std::string live = std::string("live ") + liveStatusName(lr->status);
        status = status.empty() ? live : status + ", " + live;
      }
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
  std::string out = line(head);
  for (const auto& row : cells) out += line(row);
  return out;
}

// The verdicts in words: the replay's over the processes and the live runs', and what failed.
std::string commandVerdicts(const CommandReport& c) {
  std::string out = "\n";
  if (!c.combined.empty() && !c.fastest.empty())
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
      if (!r.ok() && !r.detail.empty()) out += "   " + r.allocator + " live " + liveStatusName(r.status) + ": " + r.detail + "\n";
  }
  return out;
}

// How far the replay's verdict agrees with the live runs'.
std::string agreementLines(const CommandReport& c) {
  const Agreement& a = c.agreement;
  std::string out;
  if (!a.computed) return out;
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
  return out;
}

}  // namespace

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
  return out + commandTable(c) + commandVerdicts(c) + agreementLines(c);
}

}  // namespace strata::compare
