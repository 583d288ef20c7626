// Placeholder for `strata stats` while it is being written (issue 5).
#include <cstdio>

#include "command.hpp"

namespace strata::cli {
namespace {
int runStats(std::span<char* const>) {
  std::fputs("strata stats: not built yet\n", stderr);
  return 2;
}
}  // namespace
const Command kStatsCommand{"stats", "(being written)", "usage: strata stats\n", runStats};
}  // namespace strata::cli
