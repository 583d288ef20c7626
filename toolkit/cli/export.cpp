// `strata export --to mtrace TRACE -o FILE`: writes a Strata trace as glibc mtrace text
// (tracetools/mtrace.hpp), for tools that read that format (glibc's `mtrace` script).
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

#include "command.hpp"
#include "options.hpp"
#include "mtrace.hpp"

namespace strata::cli {
namespace {

namespace tt = strata::tracetools;

constexpr std::string_view kHelp =
    "usage: strata export --to mtrace TRACE -o FILE\n"
    "\n"
    "Writes the trace TRACE as mtrace text (the format of glibc's MALLOC_TRACE) to FILE, with\n"
    "synthesised addresses, unique over the run. Every allocation is a '+' line, every free a\n"
    "'-', a realloc a '<' '>' pair; reap_clear and reap_destroy write a '-' for each live object\n"
    "of the reap and of the reaps under it. Threads and times are not kept.\n"
    "\n"
    "  --to mtrace            the output format (mtrace is the one supported)\n"
    "  -o FILE, --output FILE the text file to write (required)\n"
    "\n"
    "Exit status: 0; 1 when TRACE cannot be read or is not a valid trace (the message names the\n"
    "byte offset) or FILE cannot be written; 2 for a wrong invocation.\n";

// A wrong invocation: the reason and the usage (command.hpp); exit status 2.
int usageError(const std::string& why) { return cli::usageError("export", kHelp, why); }

// Parses the arguments and converts.
int runExport(std::span<char* const> args) {
  std::string to, input, output;
  static constexpr support::OptionSpec kOptions[] = {{"--to", true}, {"--output", true, "-o"}};
  support::ParsedArgs parsed;
  if (std::string err = support::parseArgs(args, kOptions, parsed); !err.empty())
    return usageError(err);
  if (parsed.dashDash) return usageError("unexpected '--' (export takes a TRACE)");
  for (const support::GivenOption& o : parsed.options) (o.name == "--to" ? to : output) = o.value;
  if (parsed.operands.size() > 1)
    return usageError("give one TRACE (got '" + parsed.operands[0] + "' and '" +
                      parsed.operands[1] + "')");
  if (!parsed.operands.empty()) input = parsed.operands[0];
  if (to.empty()) return usageError("missing --to mtrace");
  if (to != "mtrace") return usageError("unknown output format '" + to + "' (supported: mtrace)");
  if (input.empty()) return usageError("missing the TRACE");
  if (output.empty()) return usageError("missing -o FILE");
  try {
    const tt::MtraceExportResult r = tt::exportMtrace(input, output);
    std::printf("exported %s: %llu events -> %llu mtrace lines in %s\n", input.c_str(),
                static_cast<unsigned long long>(r.events), static_cast<unsigned long long>(r.lines),
                output.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strata export: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace

const Command kExportCommand{"export", "write a trace as glibc mtrace text", kHelp, &runExport};

}  // namespace strata::cli
