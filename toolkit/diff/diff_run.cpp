// runDiff (diff_model.hpp): which kind of input A and B are, the model, and the files of the
// output folder: diff.json, then report.html drawn from it.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "diff/diff_model.hpp"
#include "support/error.hpp"
#include "report/report_writer.hpp"
#include "support/files.hpp"

namespace strata::diff {
namespace {

namespace fs = std::filesystem;

enum class Kind { Trace, Folder };

Kind kindOf(const std::string& which, const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st))
    throw support::Error(which + ": " + path + ": no such trace or result folder");
  if (fs::is_directory(st)) return Kind::Folder;
  return Kind::Trace;
}

}  // namespace

DiffResult runDiff(const std::string& a, const std::string& b, const DiffOptions& options,
                   const std::string& outDir) {
  const Kind ka = kindOf("A", a), kb = kindOf("B", b);
  if (ka != kb)
    throw support::Error(std::string("A is a ") + (ka == Kind::Trace ? "trace" : "result folder") +
                         " (" + a + "), B a " + (kb == Kind::Trace ? "trace" : "result folder") +
                         " (" + b + "): diff compares two traces or two folders of strata compare");
  DiffResult r = ka == Kind::Trace ? diffTraces(a, b, options) : diffFolders(a, b, options);
  std::error_code ec;
  fs::create_directories(outDir, ec);
  if (ec || !fs::is_directory(outDir))
    throw support::Error(outDir + ": cannot create the output folder" +
                         (ec ? ": " + ec.message() : ""));
  const fs::path json = fs::path(outDir) / "diff.json";
  support::writeFileAtomically(json.string(), renderJson(r, kJsonSites));
  try {
    strata::report::writeReport(outDir);
  } catch (const std::exception& e) {
    // The figures stand without the page: say why it is missing, in both outputs.
    r.notes.push_back(std::string("report.html not written: ") + e.what());
    support::writeFileAtomically(json.string(), renderJson(r, kJsonSites));
  }
  return r;
}

}  // namespace strata::diff
