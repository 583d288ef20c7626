// `strata diff A B [--top N] [--json] [--out DIR] [--fail-if-peak-grows P%]
// [--allow-different-programs]`: what changed between two runs of one program, from two
// traces or two `strata compare` folders. The work is strata::diff::runDiff (toolkit/diff);
// this file parses, calls it and prints.
#include <cstdio>
#include <string>
#include <string_view>

#include "cli/command.hpp"
#include "diff/diff_model.hpp"
#include "support/error.hpp"
#include "support/options.hpp"

namespace strata::cli {
namespace {

constexpr std::string_view kAbout =
    "usage: strata diff A B [--top N] [--json] [--out DIR] [--fail-if-peak-grows P%]\n"
    "                       [--allow-different-programs]\n"
    "\n"
    "What changed between two runs of one program. A and B are two traces (from `strata\n"
    "record`; with --sites, the change is shown by allocation site) or two result folders\n"
    "(from `strata compare`, holding results.json). Prints the peak live bytes, the bytes\n"
    "allocated and the allocations of A and B and their change; then the sites whose figures\n"
    "changed most (by change in bytes live at the peak, then in bytes allocated), each as its\n"
    "innermost frames; for folders, per trace and allocator the peak heap, fragmentation and\n"
    "time side by side. Sites are matched by their symbolized stacks (function, file, line;\n"
    "module+offset where unsymbolized), so addresses that moved between runs do not matter.\n"
    "Writes DIR/diff.json (format strata-diff-1, docs/toolkit/diff.md) and DIR/report.html.\n"
    "\n";

constexpr std::string_view kNotes =
    "\n"
    "Exit status: 0; 1 when an input cannot be read (missing, not a trace, a results.json\n"
    "truncated or of another format version), when A and B are of different kinds, or are\n"
    "runs of different programs; 2 for a wrong invocation; 3 when --fail-if-peak-grows was\n"
    "passed (after every output is written).\n"
    "\n"
    "example: strata record --sites -o old.trace -- ./app && (rebuild) &&\n"
    "         strata record --sites -o new.trace -- ./app && strata diff old.trace new.trace\n";

struct DiffCliOptions {
  bool json = false;
  std::size_t top = 20;
  std::string out = "strata-diff";
  diff::DiffOptions diff;
};

// "10", "10%", "2.5 %": a percentage of at least 0.
double parsePercent(std::string_view v) {
  std::string_view s = v;
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (!s.empty() && s.back() == '%') s.remove_suffix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  const auto p = support::parseNumber(s);
  if (!p || *p < 0) throw support::badValue("--fail-if-peak-grows", v, "a percentage, such as 10%");
  return *p;
}

std::vector<support::Option> optionTable(DiffCliOptions& o) {
  return {
      {.name = "--top",
       .value = "N",
       .help = "sites in the text (default 20; diff.json lists up to 500)",
       .bind =
           [&o](const std::string& v) {
             const auto n = support::parseUnsigned(v);
             if (!n || *n == 0 || *n > 100000)
               throw support::UsageError("--top needs a count from 1 to 100000");
             o.top = static_cast<std::size_t>(*n);
           },
       .needs = "a count of sites"},
      {.name = "--json", .help = "print diff.json instead of the table", .bind = o.json},
      {.name = "--out",
       .shortName = "-o",
       .value = "DIR",
       .help = "where diff.json and report.html go (default strata-diff)",
       .bind = o.out},
      {.name = "--fail-if-peak-grows",
       .value = "P%",
       .help = "exit 3 when B's peak live bytes exceed A's by more than\n"
               "P %, when one site's bytes live at the peak grew by more\n"
               "than P % of A's peak live bytes, or (folders) when an\n"
               "allocator's peak heap grew by more than P %",
       .bind = [&o](const std::string& v) { o.diff.thresholdPercent = parsePercent(v); },
       .needs = "a percentage"},
      {.name = "--allow-different-programs",
       .help = "compare runs of programs with different names too",
       .bind = o.diff.allowDifferentPrograms},
  };
}

const std::string kHelp = [] {
  DiffCliOptions unused;
  return std::string(kAbout) + support::formatOptions(optionTable(unused), 30) +
         std::string(kNotes);
}();

int runDiffCommand(std::span<char* const> args) {
  DiffCliOptions o;
  const support::Operands parsed = support::parseOptions(args, optionTable(o));
  if (parsed.dashDash)
    throw support::UsageError("unexpected '--' (diff takes two traces or folders)");
  if (parsed.operands.size() != 2)
    throw support::UsageError(parsed.operands.size() < 2
                                  ? "give two runs to compare: A B"
                                  : "give two runs to compare, not " +
                                        std::to_string(parsed.operands.size()));
  if (o.out.empty()) throw support::UsageError("--out needs a folder");
  const diff::DiffResult r = diff::runDiff(parsed.operands[0], parsed.operands[1], o.diff, o.out);
  if (o.json)
    std::fputs(diff::renderJson(r, diff::kJsonSites).c_str(), stdout);
  else
    std::fputs(diff::renderText(r, o.top).c_str(), stdout);
  std::fflush(stdout);
  return r.failed ? 3 : 0;
}

}  // namespace

const Command kDiffCommand{"diff", "what changed between two runs: traces or result folders", kHelp,
                           &runDiffCommand};

}  // namespace strata::cli
