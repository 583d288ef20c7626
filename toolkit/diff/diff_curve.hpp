// The curves `strata diff` reads from a compare folder: an allocator's heap over events from a
// series file, read and downsampled as report.html does (report::parseCsv, report::keptRows:
// each bucket's first, last, minimum and maximum rows kept, so the peak survives). A trace's
// live-bytes curve comes downsampled the same way from computeStats (SiteStats::curve).
#pragma once
#include <cstddef>
#include <string>

#include "diff/diff_model.hpp"

namespace strata::diff {

// The most points a curve read from a series file keeps.
inline constexpr std::size_t kCurvePoints = 2048;

// The column `yColumn` over the column `xColumn` of a CSV file with a header line (a compare
// series file). Throws support::Error naming the file when it cannot be read or lacks them.
Curve csvCurve(const std::string& path, const std::string& xColumn, const std::string& yColumn);

}  // namespace strata::diff
