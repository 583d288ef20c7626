// Placeholder for `strata compare` while it is being written (issue 5).
#include <cstdio>

#include "command.hpp"

namespace strata::cli {
namespace {
int runCompare(std::span<char* const>) {
  std::fputs("strata compare: not built yet\n", stderr);
  return 2;
}
}  // namespace
const Command kCompareCommand{"compare", "(being written)", "usage: strata compare\n", runCompare};
}  // namespace strata::cli
