// What `strata compare` measured and how it is shown: one table per trace (stdout and
// DIR/report.txt) and every result as JSON (DIR/results.json, read by plots.py).
// Kept apart from compare.cpp, which runs things, so the formatting can be read on its own.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "support/json.hpp"
#include "replay/replay_runner.hpp"
#include "tracetools/trace_inputs.hpp"
#include "tracetools/trace_stats.hpp"

namespace strata::compare {

// The one place that reads a replay's status and the time it is ranked by, so that a change
// of ReplayResult touches only these.
bool replayOk(const replay::ReplayResult& r);        // ran the trace to its end
bool replayFinished(const replay::ReplayResult& r);  // ok, or stopped at the heap limit
bool replayUnavailable(const replay::ReplayResult& r);
std::string replayStatusText(const replay::ReplayResult& r);
// Whether the ranking uses the time inside allocator calls (threaded replays) over wall time.
bool replayTimesAllocator(const replay::ReplayResult& r);
double replayTime(const replay::ReplayResult& r);  // seconds the ranking uses

// One allocator's line in a trace's table: the run with the median wall time, every run's
// times, and the series file of the median run.
struct AllocatorRow {
  std::string allocator;
  replay::ReplayResult median;    // status "unavailable" with detail = howToGet() when missing
  std::vector<double> wallRuns;   // seconds, in the order the runs happened
  std::vector<double> cpuRuns;
  double ratio = 0;               // median time / fastest ok median; 0 when not ok
  std::string seriesFile;         // relative to the output directory; empty when none
  // True when the allocator ran the trace to its end or to the heap limit.
  bool finished() const { return replayFinished(median); }
  // True when a replay was attempted and failed (crashed, error, out-of-memory).
  bool failed() const { return !finished() && !replayUnavailable(median); }
};

// One trace: where it came from and its statistics (gathered: tracetools/trace_inputs.hpp),
// and a row per allocator. A trace of one process of a recorded command also names the process.
struct TraceReport : tracetools::InputTrace {
  TraceReport() = default;
  explicit TraceReport(tracetools::InputTrace input) : tracetools::InputTrace(std::move(input)) {}
  std::vector<AllocatorRow> rows;
};

// How an allocator's live runs went.
enum class LiveStatus { Ok, Failed, Unavailable };  // Failed: exit, signal or output
const char* liveStatusName(LiveStatus s);            // "ok", "failed", "unavailable"

// One allocator running the command itself (live): every run, and the median one.
struct LiveRow {
  std::string allocator;
  LiveStatus status = LiveStatus::Ok;
  std::string detail;        // what failed, or how to get an unavailable allocator
  std::string exit;          // describeStatus() of the median run ("exit 0", "signal 11 (SIGSEGV)")
  bool stdoutMatches = true; // every run's stdout equal to the reference run's
  std::vector<double> wallRuns, cpuRuns;
  std::vector<std::uint64_t> rssRuns;
  double wallSeconds = 0, cpuSeconds = 0;  // the median run's
  std::uint64_t maxRssBytes = 0;
  std::string stdoutFile;    // the median run's captured stdout, relative to the output dir
  std::string rssSeriesFile; // the median run's RSS over time (CSV), relative; empty: none
  bool ok() const { return status == LiveStatus::Ok; }
};

// The command run live on every allocator.
struct LiveReport {
  std::string reference;     // the allocator whose stdout the others are held to (glibc)
  std::vector<LiveRow> rows; // in the order of the allocators
};

// One allocator over every process compared: replay time summed, the largest peak heap.
struct CombinedRow {
  std::string allocator;
  bool finished = false;     // every process's replay finished
  double seconds = 0;        // replayTime() summed over the processes
  std::uint64_t peakHeapBytes = 0;  // the largest over the processes
  // The allocator library's own resident pages in that process: with the heap, what the
  // allocator adds to the live peak RSS, so the figure held against it.
  std::uint64_t libraryBytes = 0;
  std::uint64_t predictedRssBytes() const { return peakHeapBytes + libraryBytes; }
};

// How far the replay's verdict agrees with the live runs'.
struct Agreement {
  bool computed = false;
  std::size_t allocators = 0;  // allocators with both a finished replay and an ok live run
  double heapRankCorrelation = NAN;  // Spearman: replay peak heap vs live peak RSS
  double timeRankCorrelation = NAN;  // Spearman: replay time vs live wall time
  struct Difference {
    std::string allocator;
    double predictedHeapBytes = 0;  // replay peak heap minus the reference's
    double liveRssBytes = 0;        // live peak RSS minus the reference's
    bool disagrees = false;
  };
  std::vector<Difference> differences;
  std::vector<std::string> notes;  // plain sentences where the verdicts disagree
};

// The whole comparison of a command (or of a trace with child-process traces beside it).
struct CommandReport {
  std::string commandLine;            // empty for traces given as files
  std::vector<CombinedRow> combined;  // empty when only one process was replayed
  std::string fastest, smallest;      // the combined verdict
  bool haveLive = false;
  LiveReport live;
  Agreement agreement;
  std::vector<std::string> skippedProcesses;  // "prog (pid N): 12 KiB allocated"
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
  bool live = false;   // the command was also run live
};

// Sets each row's ratio: its median time over the fastest ok row's.
void computeRatios(TraceReport& trace);

// The trace's block as printed: a heading, the statistics line, the table and notes under it
// (the fastest, the smallest heap, how to get an unavailable allocator, what failed).
std::string formatTable(const TraceReport& trace);

// The block for the command as a whole: the combined verdict over processes (when more than
// one), the live runs beside the replay figures, and how far the two agree.
std::string formatCommand(const CommandReport& command, const std::vector<TraceReport>& traces);

// Every result as one JSON document (results.json); `command` is null when no command or
// process group was compared.
std::string resultsJson(const CompareSettings& settings, const std::vector<TraceReport>& traces,
                        const CommandReport* command = nullptr);

// JSON string literals: the shared support::jsonString.
using support::jsonString;

// Bytes in MiB with one decimal ("12.3").
std::string mib(std::uint64_t bytes);

}  // namespace strata::compare
