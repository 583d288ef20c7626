// Readers of /proc shared by the subcommands and the benchmarks.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace strata::support {

// The running executable's path (/proc/self/exe); empty when it cannot be read.
std::string selfExe();

// A size field of /proc/<pid>/status ("VmHWM", "VmRSS") in bytes; pid 0 is this process.
std::optional<std::uint64_t> procStatusBytes(std::string_view field, int pid = 0);

// The path a process runs (/proc/<pid>/exe); empty when it cannot be read.
std::string procExe(int pid);

}  // namespace strata::support
