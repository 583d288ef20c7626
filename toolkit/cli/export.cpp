// `strata export --to mtrace TRACE -o FILE`: writes a Strata trace as glibc mtrace text
// (tracetools/mtrace.hpp), for tools that read that format (glibc's `mtrace` script).
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.hpp"
#include "support/error.hpp"
#include "support/options.hpp"
#include "tracetools/mtrace.hpp"

namespace strata::cli {
namespace {

namespace tt = strata::tracetools;

constexpr std::string_view kAbout =
    "usage: strata export --to mtrace TRACE -o FILE\n"
    "\n"
    "Writes the trace TRACE as mtrace text (the format of glibc's MALLOC_TRACE) to FILE, with\n"
    "synthesised addresses, unique over the run. Every allocation is a '+' line, every free a\n"
    "'-', a realloc a '<' '>' pair; reap_clear and reap_destroy write a '-' for each live object\n"
    "of the reap and of the reaps under it. Threads and times are not kept. A free of an\n"
    "object already freed writes nothing, and a realloc of one is written as realloc(NULL, n).\n"
    "\n";

constexpr std::string_view kNotes =
    "\n"
    "Exit status: 0; 1 when TRACE cannot be read or is not a valid trace (the message names the\n"
    "byte offset) or FILE cannot be written; 2 for a wrong invocation.\n";

// The format and the file to write, as the command line gave them.
struct Formats {
  std::string to, output;
};

std::vector<support::Option> optionTable(Formats& f) {
  return {
      {.name = "--to", .value = "mtrace", .help = "the output format (mtrace is the one supported)",
       .bind = f.to},
      {.name = "--output", .shortName = "-o", .value = "FILE",
       .help = "the text file to write (required)", .bind = f.output},
  };
}

const std::string kHelp = [] {
  Formats unused;
  return std::string(kAbout) + support::formatOptions(optionTable(unused), 25) + std::string(kNotes);
}();

// Parses the arguments and converts.
int runExport(std::span<char* const> args) {
  Formats f;
  const support::Operands parsed = support::parseOptions(args, optionTable(f));
  const std::string& to = f.to;
  const std::string& output = f.output;
  if (parsed.dashDash) throw support::UsageError("unexpected '--' (export takes a TRACE)");
  std::string input;
  if (parsed.operands.size() > 1)
    throw support::UsageError("give one TRACE (got '" + parsed.operands[0] + "' and '" +
                              parsed.operands[1] + "')");
  if (!parsed.operands.empty()) input = parsed.operands[0];
  if (to.empty()) throw support::UsageError("missing --to mtrace");
  if (to != "mtrace") throw support::UsageError("unknown output format '" + to + "' (supported: mtrace)");
  if (input.empty()) throw support::UsageError("missing the TRACE");
  if (output.empty()) throw support::UsageError("missing -o FILE");
  const tt::MtraceExportResult r = tt::exportMtrace(input, output);
  std::printf("exported %s: %llu events -> %llu mtrace lines in %s\n", input.c_str(),
              static_cast<unsigned long long>(r.events), static_cast<unsigned long long>(r.lines),
              output.c_str());
  return 0;
}

}  // namespace

const Command kExportCommand{"export", "write a trace as glibc mtrace text", kHelp, &runExport};

}  // namespace strata::cli
