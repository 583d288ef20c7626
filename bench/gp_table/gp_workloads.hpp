// gp_table's workloads (gp_table.cpp and bench/README.md describe them), built from
// workloads.hpp's generators; each generated only when asked for. Included once, by
// gp_table.cpp.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "../workloads.hpp"

namespace gp {

// A workload by name, generated only when asked for.
struct WorkloadMaker {
  std::string name;
  std::function<strata::bench::Workload()> make;
};

// The workloads, scaled: 1.0 for the full table, about 1/20 for --quick.
std::vector<WorkloadMaker> workloads(double scale) {
  namespace b = strata::bench;
  auto n = [scale](double full) { return static_cast<std::size_t>(std::max(full * scale, 64.0)); };
  std::vector<WorkloadMaker> all;
  all.push_back({"small-churn", [=] {
    return b::slotChurn("small-churn", "40 B objects, random churn over 200k slots", n(6e6),
                        static_cast<std::uint32_t>(n(2e5)), 101, [](b::Rng&) { return 40u; });
  }});
  all.push_back({"mixed-phases", [=] {
    // Six phases, each drawing sizes from its own 4x window, in the order 512-2048 B,
    // 16-64 B, 128-512 B, 32-128 B, 256-1024 B, 64-256 B. 2 % of the objects live to the
    // end, the rest ~20000 allocations: when a phase ends its memory is free but for the
    // long-lived objects in it, and a heap that cannot reuse it for the next phase's sizes
    // keeps all of it.
    const std::size_t allocs = n(1.2e6);
    return b::lifetimes("mixed-phases", "16 B..2 KiB in 6 phases, 2% long-lived", allocs, 102,
                        [allocs, scale](b::Rng& r, std::uint64_t t) {
                          constexpr unsigned kWindow[6] = {5, 0, 3, 1, 4, 2};
                          const std::uint32_t lo = 16u << kWindow[6 * t / allocs];
                          const std::uint32_t size = r.logUniform(lo, 4 * lo);
                          const std::uint64_t life =
                              r.chance(0.02) ? b::kForever : r.geometric(20000 * scale);
                          return std::pair{size, life};
                        });
  }});
  all.push_back({"growing", [=] {
    // Half of the objects are kept to the end: the live set grows steadily to ~115 MiB.
    return b::lifetimes("growing", "16 B..1 KiB, half kept: live set grows", n(1e6), 103,
                        [](b::Rng& r, std::uint64_t) {
                          const std::uint64_t life = r.chance(0.5) ? b::kForever : r.geometric(200);
                          return std::pair{r.logUniform(16, 1024), life};
                        });
  }});
  all.push_back({"large", [=] {
    return b::slotChurn("large", "16 KiB..1 MiB, random churn over 32 slots", n(6000), 32, 104,
                        [](b::Rng& r) { return r.logUniform(16 << 10, 1 << 20); });
  }});
  all.push_back({"short-lived", [=] {
    // cfrac/espresso-like: tiny objects that die young, a few that do not.
    return b::lifetimes("short-lived", "8..128 B, mean life 30 allocations, 0.5% kept", n(3e6),
                        105, [](b::Rng& r, std::uint64_t) {
                          const std::uint64_t life =
                              r.chance(0.005) ? b::kForever : r.geometric(30);
                          return std::pair{r.logUniform(8, 128), life};
                        });
  }});
  return all;
}

}  // namespace gp
