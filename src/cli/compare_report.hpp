// What `strata compare` measured and how it is shown: one table per trace (stdout and
// DIR/report.txt) and every result as JSON (DIR/results.json, read by plots.py).
// Kept apart from compare.cpp, which runs things, so the formatting can be read on its own.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "replay_runner.hpp"
#include "trace_stats.hpp"

namespace strata::cli {

// One allocator's line in a trace's table: the run with the median wall time, every run's
// times, and the series file of the median run.
struct AllocatorRow {
  std::string allocator;
  replay::ReplayResult median;    // status "unavailable" with detail = howToGet() when missing
  std::vector<double> wallRuns;   // seconds, in the order the runs happened
  std::vector<double> cpuRuns;
  double ratio = 0;               // median wall time / fastest ok median; 0 when not ok
  std::string seriesFile;         // relative to the output directory; empty when none
  // True when the allocator ran the trace to its end or to the heap limit.
  bool finished() const {
    return median.status == replay::ReplayStatus::Ok || median.status == replay::ReplayStatus::HeapLimit;
  }
  // True when a replay was attempted and failed (crashed, error, out-of-memory).
  bool failed() const { return !finished() && median.status != replay::ReplayStatus::Unavailable; }
};

// One trace: where it came from, its statistics, and a row per allocator.
struct TraceReport {
  std::string name;         // file stem, used in output file names
  std::string path;         // the trace file
  std::string description;  // the bundled workload's line, or what was recorded
  std::string statsFile;    // <name>-stats.json, relative to the output directory
  tracetools::TraceStats stats;
  std::vector<AllocatorRow> rows;
};

// How the comparison was run, for the JSON header.
struct CompareSettings {
  std::string outDir;
  std::string source;  // "workloads", "traces" or "command"
  unsigned runs = 3;
  unsigned threads = 0;
  std::uint64_t heapLimit = 0;
  double size = 1;
  std::uint64_t seed = 1;
};

// Sets each row's ratio: its median time over the fastest ok row's.
void computeRatios(TraceReport& trace);

// The trace's block as printed: a heading, the statistics line, the table and notes under it
// (the fastest, the smallest heap, how to get an unavailable allocator, what failed).
std::string formatTable(const TraceReport& trace);

// Every result as one JSON document (results.json).
std::string resultsJson(const CompareSettings& settings, const std::vector<TraceReport>& traces);

// `s` as a JSON string literal, quotes included.
std::string jsonString(const std::string& s);

// Bytes in MiB with one decimal ("12.3").
std::string mib(std::uint64_t bytes);

}  // namespace strata::cli
