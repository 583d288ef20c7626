// What one replay measured, and the names its enums have at the edges (JSON, the result file,
// tables). Below both the engine, which fills a ReplayResult in the replaying process, and the
// runner (replay_runner.hpp), which gets it back from the child; depends on nothing of the
// toolkit, so the engine does not depend on the allocator registry.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata::replay {

// One point of the heap/live curve (a CSV line: seconds,event,heap_bytes,live_bytes).
struct ReplaySample {
  double seconds = 0;           // replay time (allocator + harness) up to this point
  std::uint64_t event = 0;      // events replayed up to this point
  std::uint64_t heapBytes = 0;  // heap size (docs/toolkit/replay.md, "Metrics") at this point
  std::uint64_t liveBytes = 0;  // live bytes at this point
};

// How a replay ended. statusName() gives the text used at the edges (JSON, the result file,
// tables); code compares the enum.
enum class ReplayStatus {
  Ok,           // "ok"
  HeapLimit,    // "heap-limit": the heap passed ReplayOptions::heapLimit; the run stopped
  OutOfMemory,  // "out-of-memory"
  Crashed,      // "crashed": the replayer died of a signal
  Unavailable,  // "unavailable": the allocator's library is not on this machine
  Error,        // "error": verify mismatches, the replayer failed
  TraceError,   // "trace-error": the trace cannot be read (runReplay throws instead)
};

// "ok", "heap-limit", "out-of-memory", "crashed", "unavailable", "error", "trace-error".
const char* statusName(ReplayStatus s) noexcept;

// The status named by text (statusName's inverse); false when the text names none.
bool parseStatus(std::string_view text, ReplayStatus& out) noexcept;

// How a replay ran the trace's threads. threadModeName() gives the text used at the edges.
enum class ThreadMode {
  Unknown,    // "" (the replay did not start)
  Lifecycle,  // "lifecycle": each recorded thread on its own OS thread, started and ended as recorded
  Pool,       // "pool": a fixed pool, recorded thread t on replay thread t % N
  Single,     // "single": one thread, the trace's total order
};
const char* threadModeName(ThreadMode m) noexcept;
// The mode named by text (threadModeName's inverse); false when the text names none.
bool parseThreadMode(std::string_view text, ThreadMode& out) noexcept;

// What one replay measured.
struct ReplayResult {
  std::string allocator;
  std::string library;             // the preloaded library; empty for glibc and none
  ReplayStatus status = ReplayStatus::Ok;
  std::string detail;              // for any status but ok: one sentence (signal, package to install...)
  std::uint64_t events = 0;        // events replayed
  std::uint64_t objects = 0;       // objects created
  std::uint64_t threads = 0;       // replay threads (lifecycle: the most alive at once)
  ThreadMode threadMode = ThreadMode::Unknown;
  std::uint64_t threadsStarted = 0;  // replay threads started (lifecycle: one per thread life)
  double wallSeconds = 0;          // replay loop only (not loading the trace)
  double cpuSeconds = 0;           // CPU time of the replay, all threads
  double allocatorSeconds = 0;     // time inside allocator calls, summed over replay threads
                                   // (threaded replays only; 0 for one thread)
  std::uint64_t peakHeapBytes = 0;
  std::uint64_t startupHeapBytes = 0;  // heap when the replay starts: the allocator's start-up
  // Resident pages of the preloaded allocator library's own file (its code and data as
  // loaded) at the end: what the allocator adds to a live program's RSS beyond its heap.
  std::uint64_t libraryResidentBytes = 0;
  std::uint64_t peakLiveBytes = 0;
  double fragmentationPercent = 0; // (peak heap / peak live - 1) * 100
  std::uint64_t failedAllocations = 0;  // allocations that returned NULL during replay
  std::vector<ReplaySample> series;     // filled when options.seriesPath was set
  std::uint64_t verifyErrors = 0;       // --verify: objects whose contents changed (status error)
  std::uint64_t failedEvents = 0;       // events recorded as FAILED: not replayed
  std::uint64_t recordedThreads = 0;    // threads in the trace
};

// How the threads were replayed, in words, for the readable output: "as recorded: N thread
// lives, at most M at once", "fixed pool: recorded thread t on replay thread t % N", ...
std::string threadModeText(const ReplayResult& result);

// The result as one JSON object (the `strata replay --json` output; series omitted).
std::string toJson(const ReplayResult& result);

}  // namespace strata::replay
