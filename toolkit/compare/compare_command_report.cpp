// The block for the command as a whole and its JSON (see compare_report.hpp): the combined
// verdict over the processes, the live runs beside the replay's figures, and the agreement.
#include <algorithm>
#include <cmath>
#include <optional>

#include "compare/compare_format.hpp"
#include "compare/compare_json.hpp"
#include "compare/compare_report.hpp"

namespace strata::compare {

using namespace reportfmt;

namespace {

// A rank correlation as text: two decimals, or "n/a" when it could not be computed.
std::string correlationText(double v) { return std::isfinite(v) ? format("%.2f", v) : "n/a"; }

// Signed MiB with one decimal ("+1.5", "-0.3").
std::string signedMiB(double bytes) { return format("%+.1f", bytes / kMiB); }

}  // namespace

namespace {

// "combined": the replay's verdict over the processes, a row per allocator.
void writeCombined(support::JsonWriter& w, const CommandReport& c) {
  w.object("combined").field("fastest", c.fastest).field("smallest_heap", c.smallest);
  w.array("allocators");
  for (const CombinedRow& r : c.combined) {
    const auto ifFinished = [&r](auto v) { return r.finished ? std::optional(v) : std::nullopt; };
    w.object().field("allocator", r.allocator).field("finished", r.finished);
    w.field("time_ms", ifFinished(r.seconds * 1000.0));
    w.field("peak_heap_bytes", ifFinished(r.peakHeapBytes));
    w.field("library_resident_bytes", r.libraryBytes);
    w.field("predicted_rss_bytes", ifFinished(r.predictedRssBytes())).end();
  }
  w.end().end();
}

// "live": the live runs, a row per allocator, or null when there were none.
void writeLive(support::JsonWriter& w, const CommandReport& c) {
  if (!c.haveLive) {
    w.null("live");
    return;
  }
  w.object("live").field("reference", c.live.reference).array("results");
  for (const LiveRow& r : c.live.rows) {
    const bool ran = !r.wallRuns.empty();
    const auto ifRan = [ran](auto v) { return ran ? std::optional(v) : std::nullopt; };
    w.object().field("allocator", r.allocator).field("status", liveStatusName(r.status));
    w.field("detail", r.detail).field("exit", r.exit);
    w.field("stdout_matches", ifRan(r.stdoutMatches));
    w.field("time_ms", ifRan(r.wallSeconds * 1000.0)).field("cpu_ms", ifRan(r.cpuSeconds * 1000.0));
    w.field("max_rss_bytes", ifRan(r.maxRssBytes));
    w.array("wall_seconds_runs", r.wallRuns).array("cpu_seconds_runs", r.cpuRuns);
    w.array("max_rss_bytes_runs", r.rssRuns).field("stdout_file", r.stdoutFile);
    if (!r.rssSeriesFile.empty()) w.field("rss_series_file", r.rssSeriesFile);
    w.end();
  }
  w.end().end();
}

// "agreement": how far the replay's verdict agrees with the live runs', or null.
void writeAgreement(support::JsonWriter& w, const Agreement& a) {
  if (!a.computed) {
    w.null("agreement");
    return;
  }
  w.object("agreement").field("allocators", a.allocators);
  w.field("heap_rank_correlation", a.heapRankCorrelation);
  w.field("time_rank_correlation", a.timeRankCorrelation).array("differences");
  for (const Agreement::Difference& d : a.differences) {
    w.object().field("allocator", d.allocator);
    w.field("predicted_rss_difference_bytes", d.predictedHeapBytes);
    w.field("live_rss_difference_bytes", d.liveRssBytes).field("disagrees", d.disagrees).end();
  }
  w.end().array("notes", a.notes).end();
}

void writeCommandObject(support::JsonWriter& w, const CommandReport& c,
                        const std::vector<TraceReport>& traces) {
  w.field("command_line", c.commandLine).array("processes");
  for (const TraceReport& t : traces)
    w.object().field("trace", t.name).field("program", t.program).field("pid", t.pid)
        .field("allocated_bytes", t.stats.totalBytes).end();
  w.end().array("skipped_processes", c.skippedProcesses);
  writeCombined(w, c);
  writeLive(w, c);
  writeAgreement(w, c.agreement);
}

}  // namespace

void writeCommand(support::JsonWriter& w, const CommandReport& c,
                  const std::vector<TraceReport>& traces) {
  w.object("command");
  writeCommandObject(w, c, traces);
  w.end();
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
