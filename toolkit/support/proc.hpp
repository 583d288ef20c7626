// Readers of /proc shared by the subcommands and the benchmarks.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace strata::support {

// The running executable's path (/proc/self/exe); empty when it cannot be read.
std::string selfExe();

// The directory holding the running executable (where strata-replayer, strata-exec and the
// benchmarks' helper programs are built and installed beside it); empty when unknown.
std::string selfDirectory();

// A size field of /proc/<pid>/status ("VmHWM", "VmRSS") in bytes; pid 0 is this process.
std::optional<std::uint64_t> procStatusBytes(std::string_view field, int pid = 0);

// The path a process runs (/proc/<pid>/exe); empty when it cannot be read.
std::string procExe(int pid);

// ---- this process, without allocating: safe between replay windows and in measured children

// A "Name:   N kB" field of a /proc/self file, in bytes ("/proc/self/status", "VmHWM:";
// "/proc/self/smaps_rollup", "Rss:"); 0 when absent.
std::uint64_t procFieldBytes(const char* path, const char* field) noexcept;

// Anonymous resident memory (statm: resident minus file-backed and shared pages, and minus
// AddressSanitizer's shadow in a build with it), and the file-backed and shared resident
// memory, in bytes.
std::uint64_t anonResidentBytes() noexcept;
std::uint64_t fileResidentBytes() noexcept;

// The resident bytes of every mapping whose name in /proc/self/smaps is exactly `name`: a
// file's path ("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2") or "[heap]" (the brk heap).
std::uint64_t mappingResidentBytes(const char* name) noexcept;

// The resident bytes of AddressSanitizer's shadow mappings in a build with it (instrumented
// reads fault them in: not the program's memory); 0 in any other build.
std::uint64_t sanitizerShadowResidentBytes() noexcept;

// Makes the peak-RSS mark (VmHWM) start again from the current RSS; false when it cannot.
bool resetPeakRss() noexcept;

}  // namespace strata::support
