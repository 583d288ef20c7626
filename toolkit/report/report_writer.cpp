#include "report_writer.hpp"
#include "error.hpp"
namespace strata::report {
std::filesystem::path writeReport(const std::filesystem::path& dir) {
  throw support::Error("report.html: not built yet (" + dir.string() + ")");
}
void writeReportTo(const std::filesystem::path& d, const std::filesystem::path&) { writeReport(d); }
}  // namespace strata::report
