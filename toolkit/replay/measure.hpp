// What the replay measures about its own process: resident memory from /proc, the peak-RSS
// mark, CPU time, and the heap baseline taken without the allocator under test
// (../../docs/replay.md). None of these allocate, so they can run between replay windows.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "support/proc.hpp"

namespace strata::replay {

// The /proc readers (anonymous and file-backed resident memory, VmHWM, a mapping's resident
// bytes, the peak-RSS reset) are the shared ones of toolkit/support/proc.hpp.

// CPU time of the process, all threads, in seconds.
double cpuNow() noexcept;

// The heap (../../docs/replay.md, "What counts as heap"): anonymous resident memory - the
// replayer's own mappings - the baseline, the process without the allocator (measured by the
// caller; unset: the process as it is when measuring starts).
class HeapMeter {
 public:
  // Resets the peak-RSS mark and takes the figures the heap is measured from.
  void start(std::optional<std::uint64_t> baselineBytes) noexcept;
  // The heap when start() ran: the allocator's start-up.
  std::uint64_t atStart() const noexcept { return startup_; }
  std::uint64_t now() const noexcept;
  // The peak the peak-RSS mark shows, by the same definition (it catches a peak between two
  // samples): VmHWM - file-backed pages (the more of start and now: the kernel may evict some
  // meanwhile) - the replayer's own mappings - the baseline; 0 when that is negative.
  std::uint64_t peakByHighWaterMark() const noexcept;

  // After the replayer's own tables grew (between windows): keeps peakBefore, what
  // peakByHighWaterMark said before they grew, and resets the mark, so that the moment the
  // tables held an old and a new copy is not taken for heap. peakByHighWaterMark includes
  // what was kept.
  void foldPeak(std::uint64_t peakBefore) noexcept;

 private:
  std::uint64_t heapOf(std::uint64_t anon, std::uint64_t own) const noexcept {
    return anon > own + baseline_ ? anon - own - baseline_ : 0;
  }
  std::uint64_t file0_ = 0, baseline_ = 0, startup_ = 0;
  std::uint64_t folded_ = 0;  // the peak kept by foldPeak
};

// The resident bytes of the libraries LD_PRELOAD names (the allocator under test), by their
// resolved paths as /proc/self/smaps shows them; 0 with nothing preloaded.
std::uint64_t preloadedLibraryResidentBytes() noexcept;

// The heap baseline of this process, as `strata-replayer --measure-baseline` prints it:
// anonymous resident memory minus what glibc's malloc holds in [heap]. Meant to be called at
// the start of main in a process with no allocator preloaded.
std::uint64_t startBaselineBytes() noexcept;

// What `replayer --measure-baseline` printed: the baseline, or why there is none. Not an
// error: a replay without a baseline measures the heap from its own start.
struct ChildBaseline {
  std::optional<std::uint64_t> bytes;
  std::string whyNot;  // when bytes is unset: one sentence naming the replayer
};

// Runs `replayer --measure-baseline` with LD_PRELOAD removed from the environment.
ChildBaseline baselineFromChild(const std::string& replayer);

}  // namespace strata::replay
