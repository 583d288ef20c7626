// `strata report DIR|DOCUMENT [-o FILE]`: report.html drawn again from a result folder.
#include "command.hpp"
#include "error.hpp"

namespace strata::cli {
namespace {
int runReport(std::span<char* const>) { throw support::Error("strata report: not built yet"); }
}  // namespace
const Command kReportCommand{"report", "draw report.html again from a result folder", "usage: strata report DIR\n", &runReport};
}  // namespace strata::cli
