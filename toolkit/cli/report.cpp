// `strata report DIR|DOCUMENT [-o FILE]`: report.html drawn again from a result folder, with
// what the folder holds now (toolkit/report). Prints the path written.
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.hpp"
#include "support/error.hpp"
#include "support/options.hpp"
#include "report/report_writer.hpp"

namespace strata::cli {
namespace {

constexpr std::string_view kAbout =
    "usage: strata report DIR|DOCUMENT [-o FILE]\n"
    "\n"
    "Draws report.html again from a result folder: the folder `strata compare`, `strata stats\n"
    "--sites`, `strata tune`, `strata drag` or `strata diff` wrote its results into. DIR holds\n"
    "exactly one main document (results.json, stats.json, tune.json, drag.json or diff.json);\n"
    "DOCUMENT names one of them, for a folder holding more than one. The page embeds that\n"
    "document, every file it names under a key ending in \"_file\" (JSON as it is, CSV curves\n"
    "with more than 4,000 rows downsampled with every bucket's first, last, minimum and maximum\n"
    "rows kept), its style and scripts and the charting library: it opens offline, from\n"
    "file://, and fetches nothing. The page is written under a temporary name and renamed, so\n"
    "an interrupted run leaves the old page or none.\n"
    "\n"
    R"(A document written in another format version ("format": "strata-compare-2") is refused:)"
    "\n"
    "draw it with the strata that wrote it. The JSON documents are described in\n"
    "docs/toolkit/json.md.\n"
    "\n";

constexpr std::string_view kNotes =
    "\n"
    "Prints the path of the page written.\n"
    "\n"
    "Exit status: 0; 1 when the folder holds no main document or more than one, or a document\n"
    "or a file it names is missing, unreadable, not JSON, truncated, malformed CSV or of\n"
    "another format version (the message names the file), or the page cannot be written; 2\n"
    "for a wrong invocation.\n"
    "\n"
    "example: strata compare --runs 1 --out cmp && strata report cmp -o /tmp/cmp.html\n";

struct ReportOptions {
  std::string out;
};

std::vector<support::Option> optionTable(ReportOptions& o) {
  return {
      {.name = "--out", .shortName = "-o", .value = "FILE",
       .help = "write the page to FILE (default: report.html in the result folder)",
       .bind = o.out, .needs = "a FILE to write"},
  };
}

const std::string kHelp = [] {
  ReportOptions unused;
  return std::string(kAbout) + support::formatOptions(optionTable(unused), 18) +
         std::string(kNotes);
}();

int runReport(std::span<char* const> args) {
  ReportOptions o;
  const support::Operands given = support::parseOptions(args, optionTable(o));
  if (given.dashDash) throw support::UsageError("takes no command after '--'");
  if (given.operands.empty()) throw support::UsageError("missing the result folder DIR to draw");
  if (given.operands.size() > 1)
    throw support::UsageError("give one result folder (got '" + given.operands[0] + "' and '" +
                              given.operands[1] + "')");
  const std::filesystem::path source = given.operands[0];
  std::filesystem::path out = o.out;
  if (out.empty()) {  // report.html beside the main document
    std::error_code ec;
    const bool isDocument = std::filesystem::is_regular_file(source, ec);
    const std::filesystem::path dir = isDocument ? source.parent_path() : source;
    out = (dir.empty() ? std::filesystem::path(".") : dir) / "report.html";
  }
  report::writeReportTo(source, out);
  std::printf("%s\n", out.c_str());
  return 0;
}

}  // namespace

const Command kReportCommand{"report", "draw report.html again from a result folder", kHelp,
                             &runReport};

}  // namespace strata::cli
