// The bundled workloads: deterministic generators (a seed and a size) that write traces, so
// `strata compare` has something real-shaped to judge allocators on with no program at hand.
// Contract between toolkit/tracetools (which implements it) and toolkit/cli (which calls it).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "tracetools/trace_file.hpp"

namespace strata::tracetools {

struct WorkloadInfo {
  std::string_view name;         // "web-proxy", "editor", "server", "steady"
  std::string_view description;  // one line for tables and --help
};

// The workloads `strata compare` runs when given no trace, in its order.
std::span<const WorkloadInfo> bundledWorkloads();

// Every workload `strata generate` makes: those, then the long-running one ("steady"), whose
// live memory stays fixed however many events it makes, for checking that an analysis's
// memory follows what is live rather than what was ever allocated.
std::span<const WorkloadInfo> allWorkloads();

// The workload with this name, or nullptr.
const WorkloadInfo* findWorkload(std::string_view name);

// Writes the named workload's trace to `path`. `size` scales the run: about `size` million
// events (1 is the default; fractions allowed for tests). The same name, seed and size give a
// byte-identical file (its event chunks compressed unless `compression` is No). Throws
// support::Error (naming the path) when it cannot write.
void generateWorkload(std::string_view name, std::uint64_t seed, double size,
                      const std::string& path, ChunkCompression compression = ChunkCompression::Yes);

// The same, returning the number of events written (for `strata generate`'s summary). Throws
// support::UsageError for an unknown name (the message lists the known ones) or a size
// outside (0, 1000].
std::uint64_t generateWorkloadEvents(std::string_view name, std::uint64_t seed, double size,
                                     const std::string& path,
                                     ChunkCompression compression = ChunkCompression::Yes);

}  // namespace strata::tracetools
