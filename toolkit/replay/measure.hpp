// What the replay measures about its own process: resident memory from /proc, the peak-RSS
// mark, CPU time, and the heap baseline taken without the allocator under test
// (../../docs/replay.md). None of these allocate, so they can run between replay windows.
#pragma once
#include <cstdint>
#include <string>

#include "proc.hpp"

namespace strata::replay {

// The /proc readers (anonymous and file-backed resident memory, VmHWM, a mapping's resident
// bytes, the peak-RSS reset) are the shared ones of toolkit/support/proc.hpp.

// CPU time of the process, all threads, in seconds.
double cpuNow() noexcept;

// The heap baseline of this process, as `strata-replayer --measure-baseline` prints it:
// anonymous resident memory minus what glibc's malloc holds in [heap]. Meant to be called at
// the start of main in a process with no allocator preloaded.
std::uint64_t startBaselineBytes() noexcept;

// Runs `replayer --measure-baseline` with LD_PRELOAD removed from the environment and returns
// what it printed; false with error set when it could not run or printed no number.
bool baselineFromChild(const std::string& replayer, std::uint64_t& out, std::string& error);

}  // namespace strata::replay
