// report.html: one self-contained page drawn from a result folder (`strata compare`, `strata
// stats --sites`, `strata tune`, `strata drag`, `strata diff`), opened offline from file://.
// The folder's main document says what kind of result it is and at which format version:
//   results.json (strata-compare-N), stats.json (strata-stats-N), tune.json (strata-tune-N),
//   drag.json (strata-drag-N), diff.json (strata-diff-N).
// The page embeds that document, every file it names under a key ending in "_file" (JSON
// parsed, CSV as columns, long curves downsampled with their extremes kept), the page's
// script and style, and the charting library: nothing is fetched when it is viewed.
#pragma once
#include <filesystem>

namespace strata::report {

// Writes DIR/report.html for the result folder DIR and returns its path. Throws
// support::Error naming the file and what is wrong with it (missing, not JSON, truncated,
// written by another format version, a named file missing).
std::filesystem::path writeReport(const std::filesystem::path& dir);

// The same, for DIR or DIR/<main document>, written to `out`.
void writeReportTo(const std::filesystem::path& dirOrDocument, const std::filesystem::path& out);

}  // namespace strata::report
