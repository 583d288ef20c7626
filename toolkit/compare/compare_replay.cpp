// Replaying one trace on every allocator (compare_steps.hpp): --runs rounds, the allocators
// taking turns within a round so machine noise hits all alike; an allocator whose replay
// fails is not run again. Each allocator's row is its median run.
#include <algorithm>

#include "compare/compare_steps.hpp"
#include "replay/replay_runner.hpp"
#include "support/files.hpp"

namespace strata::compare {
namespace {

// Every run of one allocator on one trace.
struct Runs {
  const registry::ResolvedAllocator* where = nullptr;
  std::vector<replay::ReplayResult> results;
  std::vector<std::string> seriesFiles;  // one per result
  bool failed = false;
};

// Writes a replay's series as CSV when the runner filled it but left no file.
void writeSeries(const fs::path& path, const replay::ReplayResult& r) {
  std::string csv = "seconds,event,heap_bytes,live_bytes\n";
  char line[128];
  for (const replay::ReplaySample& s : r.series) {
    std::snprintf(line, sizeof line, "%.9g,%llu,%llu,%llu\n", s.seconds,
                  static_cast<unsigned long long>(s.event),
                  static_cast<unsigned long long>(s.heapBytes),
                  static_cast<unsigned long long>(s.liveBytes));
    csv += line;
  }
  support::writeFileAtomically(path.string(), csv);
}

// Turns an allocator's runs into its row: the run with the median time (the failed run if
// one failed), whose series file is kept as series/<trace>-<allocator>.csv.
AllocatorRow makeRow(const std::string& allocator, Runs& runs, const fs::path& outDir,
                     const std::string& traceName) {
  AllocatorRow row;
  row.allocator = allocator;
  for (const replay::ReplayResult& r : runs.results) {
    row.wallRuns.push_back(r.wallSeconds);
    row.cpuRuns.push_back(r.cpuSeconds);
  }
  std::size_t pick = runs.results.size() - 1;
  if (!runs.failed) {
    std::vector<std::size_t> order(runs.results.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return replayTime(runs.results[a]) < replayTime(runs.results[b]);
    });
    pick = order[(order.size() - 1) / 2];
  }
  row.median = runs.results[pick];
  row.median.allocator = allocator;
  const std::string kept = "series/" + traceName + "-" + support::fileSafe(allocator) + ".csv";
  std::error_code ec;
  for (std::size_t i = 0; i < runs.seriesFiles.size(); ++i) {
    const fs::path file = runs.seriesFiles[i];
    if (i == pick && row.finished()) {
      if (!fs::exists(file, ec) && !runs.results[i].series.empty())
        writeSeries(file, runs.results[i]);
      if (fs::exists(file, ec)) {
        fs::rename(file, outDir / kept, ec);
        if (!ec) row.seriesFile = kept;
      }
    } else {
      fs::remove(file, ec);
    }
  }
  return row;
}

}  // namespace

void replayTrace(const Options& o, const std::vector<registry::ResolvedAllocator>& where,
                 TraceReport& trace, const std::function<void(const std::string&)>& step,
                 const std::function<void(std::size_t)>& skip) {
  const fs::path out = o.outDir;
  std::vector<Runs> runs(o.allocators.size());
  for (std::size_t a = 0; a < runs.size(); ++a) runs[a].where = &where[a];
  for (unsigned round = 0; round < o.runs; ++round) {
    for (std::size_t a = 0; a < runs.size(); ++a) {
      Runs& r = runs[a];
      if (!r.where->available || r.failed) continue;
      const std::string& name = r.where->spec.label;
      step(trace.name + ": " + name + " run " + std::to_string(round + 1) + "/" +
           std::to_string(o.runs));
      replay::ReplayOptions ro;
      ro.tracePath = trace.path;
      ro.threads = o.threads;
      ro.heapLimit = o.heapLimit;
      ro.seriesPath = (out / "series" / (trace.name + "-" + support::fileSafe(name) + ".run" +
                                         std::to_string(round + 1) + ".csv")).string();
      r.seriesFiles.push_back(ro.seriesPath);
      r.results.push_back(replay::runReplay(ro, *r.where));
      if (!replayFinished(r.results.back())) {
        r.failed = true;
        skip(o.runs - round - 1);
      }
    }
  }
  for (std::size_t a = 0; a < runs.size(); ++a) {
    const std::string& name = where[a].spec.label;
    if (!runs[a].where->available) {
      AllocatorRow row;
      row.allocator = name;
      row.median.allocator = name;
      row.median.status = replay::ReplayStatus::Unavailable;
      row.median.detail = runs[a].where->detail;
      trace.rows.push_back(row);
      continue;
    }
    trace.rows.push_back(makeRow(name, runs[a], out, trace.name));
  }
  computeRatios(trace);
}

}  // namespace strata::compare
