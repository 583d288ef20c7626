// The merger: a thread of the recorder's own that merges the threads' event rings into the
// address map and the trace (events.hpp), so that the program's threads only push raw
// events. Without it every recorded call of a single-threaded program updates the address
// map and encodes its event itself, a cache miss per free in a program with many live
// objects; and the threads of a multi-threaded one take turns merging under the lock. With
// it they do neither, as long as it keeps up (a thread whose ring is full merges, as before).
//
// It starts once the program has made kStartAfter recorded calls (short-lived programs never
// get a thread), with the tsc clock only (rings need it), and never when
// STRATA_TRACE_MERGER=off. A program's signals are never delivered to it (all blocked), it
// records nothing (its own allocations pass through), and a fork child starts its own when
// it is busy enough in turn. It merges in batches of kBatch events so that a thread waiting
// for the lock (a realloc, a reap call) waits for one batch at most, and sleeps between looks
// when there is little to do: 50 us after a small batch, doubling up to 2 ms while idle.
#pragma once
#include <stdint.h>

#include <atomic>

namespace strata::record {

struct Merger {
  static constexpr uint64_t kStartAfter = 65536;
  static constexpr uint64_t kBatch = 256;
  // Recorded calls still to go before the merger starts (counted under the lock); 0 once it
  // is started, or when it is off.
  uint64_t countdown = 0;
  std::atomic<bool> running{false};
};
[[gnu::visibility("hidden")]] extern Merger gMerger;

// At recorder start (STRATA_TRACE_MERGER: "off", or a number of calls to wait for instead
// of kStartAfter; a warning on stderr for anything else) and in a fork child.
void configureMerger(const char* setting) noexcept;
void resetMergerAfterFork() noexcept;

// Counts n recorded calls (under the lock: one call's lock path, or a merge of n ring
// events); true when the merger is due to start, which the caller then does with
// startMerger() once it has let go of the lock.
inline bool mergerDue(uint64_t n = 1) {
  if (gMerger.countdown == 0) [[likely]] return false;
  if (n < gMerger.countdown) {
    gMerger.countdown -= n;
    return false;
  }
  gMerger.countdown = 0;
  return true;
}

// Starts the merger thread (outside the lock). Nothing happens when it cannot.
[[gnu::noinline]] void startMerger() noexcept;

}  // namespace strata::record
