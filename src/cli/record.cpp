// Placeholder for `strata record` while it is being written (issue 5).
#include <cstdio>

#include "command.hpp"

namespace strata::cli {
namespace {
int runRecord(std::span<char* const>) {
  std::fputs("strata record: not built yet\n", stderr);
  return 2;
}
}  // namespace
const Command kRecordCommand{"record", "(being written)", "usage: strata record\n", runRecord};
}  // namespace strata::cli
