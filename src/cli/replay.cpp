// Placeholder for `strata replay` while it is being written (issue 5).
#include <cstdio>

#include "command.hpp"

namespace strata::cli {
namespace {
int runReplay(std::span<char* const>) {
  std::fputs("strata replay: not built yet\n", stderr);
  return 2;
}
}  // namespace
const Command kReplayCommand{"replay", "(being written)", "usage: strata replay\n", runReplay};
}  // namespace strata::cli
