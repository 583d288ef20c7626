// `strata diff A B`: what changed between two traces or two result folders.
#include "command.hpp"
#include "error.hpp"

namespace strata::cli {
namespace {
int runDiff(std::span<char* const>) { throw support::Error("strata diff: not built yet"); }
}  // namespace
const Command kDiffCommand{"diff", "what changed between two runs: traces or result folders", "usage: strata diff A B\n", &runDiff};
}  // namespace strata::cli
