// What the replay measures about its own process: resident memory from /proc, the peak-RSS
// mark, CPU time, and the heap baseline taken without the allocator under test
// (../../docs/replay.md). None of these allocate, so they can run between replay windows.
#pragma once
#include <cstdint>
#include <string>

namespace strata::replay {

// The process's anonymous resident memory in bytes (statm: resident minus file-backed and
// shared pages).
std::uint64_t anonResidentBytes() noexcept;

// The process's file-backed and shared resident bytes (what VmRSS holds beyond the anonymous).
std::uint64_t fileResidentBytes() noexcept;

// One "Name:   N kB" field of /proc/self/status, in bytes (0 when absent).
std::uint64_t statusField(const char* name) noexcept;

// Resident bytes of the [heap] mapping (glibc malloc's brk heap) from /proc/self/smaps.
std::uint64_t brkHeapResidentBytes() noexcept;

// Resets the peak-RSS mark (VmHWM) so a later read covers what follows only.
void resetPeakRss() noexcept;

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
