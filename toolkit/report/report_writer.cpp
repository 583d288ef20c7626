// report.html written (report_writer.hpp): the folder read (result_folder), the bundle and the
// page made (report_page), then the page written beside a temporary name and renamed over the
// old one, so an interrupted run never leaves half a page.
#include "report_writer.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "error.hpp"
#include "report_page.hpp"
#include "result_folder.hpp"
#include "web_assets.hpp"

namespace strata::report {

namespace fs = std::filesystem;
using support::Error;

namespace {

// Writes `text` to `out` through a temporary file in the same folder.
void writeAtomically(const fs::path& out, const std::string& text) {
  const fs::path folder = out.parent_path().empty() ? fs::path(".") : out.parent_path();
  const fs::path temp = folder / ("." + out.filename().string() + ".tmp-" + std::to_string(::getpid()));
  std::FILE* f = std::fopen(temp.c_str(), "wb");
  if (!f)
    throw Error(out.string() + ": cannot write: " + std::strerror(errno) + " (in " +
                folder.string() + ")");
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int writeErr = errno;
  const bool closed = std::fclose(f) == 0;
  const int err = written ? errno : writeErr;
  if (!written || !closed) {
    std::remove(temp.c_str());
    throw Error(out.string() + ": cannot write: " + std::strerror(err));
  }
  if (std::rename(temp.c_str(), out.c_str()) != 0) {
    const int renameErr = errno;
    std::remove(temp.c_str());
    throw Error(out.string() + ": cannot write: " + std::strerror(renameErr));
  }
}

}  // namespace

void writeReportTo(const fs::path& dirOrDocument, const fs::path& out) {
  if (!pageBuilt())
    throw Error("report.html: this strata was built without the page (toolkit/report/web/ "
                "held no manifest.txt and report.html when it was built)");
  const ResultFolder folder = readResultFolder(dirOrDocument);
  const std::string data = scriptSafeJson(reportBundle(folder).dump());
  writeAtomically(out, renderPage(pageTemplate(), webAssets(), data));
}

fs::path writeReport(const fs::path& dir) {
  const fs::path out = dir / "report.html";
  writeReportTo(dir, out);
  return out;
}

}  // namespace strata::report
