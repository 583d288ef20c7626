// Placeholder for `strata generate` while it is being written (issue 5).
#include <cstdio>

#include "command.hpp"

namespace strata::cli {
namespace {
int runGenerate(std::span<char* const>) {
  std::fputs("strata generate: not built yet\n", stderr);
  return 2;
}
}  // namespace
const Command kGenerateCommand{"generate", "(being written)", "usage: strata generate\n", runGenerate};
}  // namespace strata::cli
