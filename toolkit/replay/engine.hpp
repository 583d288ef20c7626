// The replay engine: replays a trace in this process against the process's own malloc (which
// is whatever LD_PRELOAD put there: strata-replayer runs it in a child per allocator) or a
// do-nothing allocator, and measures it (../../docs/replay.md). runReplay() in
// replay_runner.cpp is the child-process wrapper; tests and bench/replay_harness call the
// engine directly.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "replay/replay_result.hpp"

namespace strata::replay {

// Which allocator the engine calls.
enum class EngineAllocator {
  System,  // malloc/free/operator new... of this process (glibc, or a preloaded library)
  None,    // returns one fixed non-null pointer and frees nothing: the harness's own cost
};

// How to replay. Defaults match `strata replay`.
struct EngineOptions {
  EngineAllocator allocator = EngineAllocator::System;
  unsigned threads = 0;         // 0: as recorded (lifecycle), or one per recorded thread (pool)
  std::uint64_t heapLimit = 0;  // bytes; 0: none
  bool writeObjects = true;     // write every object's bytes (forced off for None)
  bool verify = false;          // write an id-derived pattern and check it at free/realloc
  bool collectSeries = true;    // keep the heap/live samples in ReplayResult::series
  std::uint64_t windowEvents = 0;  // events per window (and sample); 0: about 1/1000 of the trace
  // Anonymous resident bytes of the process without the allocator (strata-replayer
  // --measure-baseline); heap = anonymous resident - the replayer's own mappings - this.
  // Unset: the process as it is when the replay starts (so the allocator's start-up and the
  // caller's own heap are not counted: what in-process tests and the harness want).
  std::optional<std::uint64_t> baselineBytes;
};

// Pool mode: at most this many replay threads; recorded thread t replays on thread t % threads.
inline constexpr unsigned kMaxReplayThreads = 64;

// Lifecycle mode (the trace has ThreadStart/ThreadEnd events, threads = 0): each recorded
// thread replays on its own OS thread, started and ended where the program's was; a trace with
// more threads alive at once than this replays on the pool instead (the detail says so).
inline constexpr std::uint64_t kMaxLifecycleThreads = 512;

// Replays the trace file at path. Never throws for a bad trace: status says what happened
// (Ok, HeapLimit, Error for verify mismatches, TraceError for an unreadable trace with the
// reader's message and byte offset in detail; runReplay turns that into an exception).
ReplayResult replayFile(const std::string& path, const EngineOptions& options);

// The same for a trace held in memory.
ReplayResult replayMemory(const unsigned char* data, std::size_t size, const EngineOptions& options);

}  // namespace strata::replay
