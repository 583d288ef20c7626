// report.html written (report_writer.hpp): the folder read (result_folder), the bundle and the
// page made (report_page), then the page written beside a temporary name and renamed over the
// old one, so an interrupted run never leaves half a page.
#include "support/files.hpp"
#include "report/report_writer.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "support/error.hpp"
#include "report/report_page.hpp"
#include "report/result_folder.hpp"
#include "report/web_assets.hpp"

namespace strata::report {

namespace fs = std::filesystem;
using support::Error;

namespace {

}  // namespace

void writeReportTo(const fs::path& dirOrDocument, const fs::path& out) {
  if (!pageBuilt())
    throw Error("report.html: this strata was built without the page (toolkit/report/web/ "
                "held no manifest.txt and report.html when it was built)");
  const ResultFolder folder = readResultFolder(dirOrDocument);
  const std::string data = scriptSafeJson(reportBundle(folder).dump());
  support::writeFileAtomically(out.string(), renderPage(pageTemplate(), webAssets(), data));
}

fs::path writeReport(const fs::path& dir) {
  const fs::path out = dir / "report.html";
  writeReportTo(dir, out);
  return out;
}

}  // namespace strata::report
