// Running one replay of a trace against one allocator, as `strata replay` and `strata compare`
// do: the trace is replayed by the strata-replayer program in a child process with the
// allocator's library in LD_PRELOAD (nothing preloaded for glibc), and its result is read back.
// Contract between toolkit/replay (which implements it) and its callers (the cli, compare,
// tune), which parse and resolve the allocator spec once and hand the runner the result.
#pragma once
#include <cstdint>
#include <string>

#include "registry/allocator_spec.hpp"
#include "replay/replay_result.hpp"

namespace strata::replay {

// What to replay and how.
struct ReplayOptions {
  std::string tracePath;
  unsigned threads = 0;         // 0: as recorded (or one per recorded thread); 1: the total order
  std::uint64_t heapLimit = 0;  // bytes of heap; 0: no limit. Over it the run stops: "heap-limit"
  bool writeObjects = true;     // write every byte of every object, as a program would
  std::string seriesPath;       // when set: the heap/live curve is written here as CSV
  bool verify = false;          // write an id-derived pattern, check it at free (for tests)
};

// Replays options.tracePath against `allocator` (a resolved spec: a known allocator, a library
// path, or "none", the do-nothing allocator) in a child process and returns what it measured.
// An allocator that is not available, fails its probe, or crashes the replay is an outcome,
// not an error: status says what happened. Throws support::Error only for errors of the
// caller's own (trace file missing, corrupt trace: the message names the file and byte offset).
ReplayResult runReplay(const ReplayOptions& options, const registry::ResolvedAllocator& allocator);

}  // namespace strata::replay
