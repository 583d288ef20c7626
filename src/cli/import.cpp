// Placeholder for `strata import` while it is being written (issue 5).
#include <cstdio>

#include "command.hpp"

namespace strata::cli {
namespace {
int runImport(std::span<char* const>) {
  std::fputs("strata import: not built yet\n", stderr);
  return 2;
}
}  // namespace
const Command kImportCommand{"import", "(being written)", "usage: strata import\n", runImport};
}  // namespace strata::cli
