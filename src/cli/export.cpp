// Placeholder for `strata export` while it is being written (issue 5).
#include <cstdio>

#include "command.hpp"

namespace strata::cli {
namespace {
int runExport(std::span<char* const>) {
  std::fputs("strata export: not built yet\n", stderr);
  return 2;
}
}  // namespace
const Command kExportCommand{"export", "(being written)", "usage: strata export\n", runExport};
}  // namespace strata::cli
