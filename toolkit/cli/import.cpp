// `strata import --from mtrace|heaptrack FILE -o TRACE`: converts glibc's MALLOC_TRACE output
// (tracetools/mtrace.hpp) or a heaptrack recording (tracetools/heaptrack.hpp) into a Strata
// trace, so a program traced with another tool can be replayed and compared.
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.hpp"
#include "support/error.hpp"
#include "support/options.hpp"
#include "tracetools/heaptrack.hpp"
#include "tracetools/mtrace.hpp"

namespace strata::cli {
namespace {

namespace tt = strata::tracetools;

constexpr std::string_view kAbout =
    "usage: strata import --from mtrace|heaptrack FILE [--no-compress] -o TRACE\n"
    "\n"
    "--from mtrace: converts FILE, the text glibc's mtrace() writes to $MALLOC_TRACE, into the\n"
    "Strata trace\n"
    "TRACE. On Debian 12 (glibc 2.36) a program that calls mtrace() writes one when run as\n"
    "  LD_PRELOAD=libc_malloc_debug.so.0 MALLOC_TRACE=FILE PROGRAM\n"
    "Addresses become object ids; a '<' '>' pair becomes one realloc. mtrace has no threads\n"
    "and no times: every event is on thread 0 at time 0, and calloc, memalign and new all\n"
    "appear as malloc. Frees of addresses that were not allocated while tracing are counted\n"
    "and skipped (with a warning).\n"
    "\n"
    "--from heaptrack: converts FILE, the heaptrack.NAME.PID.zst (or .gz, or decompressed)\n"
    "recording heaptrack writes, into TRACE with allocation sites (one per heaptrack call\n"
    "stack; `strata stats --sites TRACE` names their functions while the program's files are\n"
    "there). heaptrack records sizes and stacks, not calls: every allocation (calloc,\n"
    "realloc's new block, aligned ones too) is a malloc of its size and every deallocation\n"
    "(realloc's old block too) a free, all on one thread, at heaptrack's 10 ms clock. It says\n"
    "which size and stack a free releases, not which object: the oldest live one of those\n"
    "is freed. docs/toolkit/import.md says what is exact and what is not.\n"
    "\n";

constexpr std::string_view kNotes =
    "\n"
    "Exit status: 0; 1 when FILE cannot be read or has a malformed line (the message names\n"
    "FILE:LINE) or TRACE cannot be written; 2 for a wrong invocation.\n";

// The format and the file to write, as the command line gave them.
struct Formats {
  std::string from, output;
  bool noCompress = false;
};

std::vector<support::Option> optionTable(Formats& f) {
  return {
      {.name = "--from", .value = "FORMAT", .help = "the input format: mtrace or heaptrack",
       .bind = f.from},
      {.name = "--output", .shortName = "-o", .value = "TRACE",
       .help = "the trace to write (required)", .bind = f.output},
      {.name = "--no-compress",
       .help = "plain event chunks (format version 2), not zstd-compressed\n"
               "ones (version 3)",
       .bind = f.noCompress},
  };
}

const std::string kHelp = [] {
  Formats unused;
  return std::string(kAbout) + support::formatOptions(optionTable(unused), 27) + std::string(kNotes);
}();

// Converts a heaptrack recording; prints what it did and its warnings.
int convertHeaptrack(const std::string& input, const std::string& output,
                     tt::ChunkCompression compression) {
  const tt::HeaptrackImportResult r = tt::importHeaptrack(input, output, compression);
  for (const std::string& w : r.warnings)
    std::fprintf(stderr, "strata import: warning: %s\n", w.c_str());
  if (r.unknownFrees != 0)
    std::fprintf(stderr, "strata import: warning: %s: skipped %llu deallocation(s) with no live "
                 "allocation of their kind\n", input.c_str(),
                 static_cast<unsigned long long>(r.unknownFrees));
  if (r.ambiguousFrees != 0)
    std::fprintf(stderr, "strata import: note: %s: %llu free(s) had several live objects of "
                 "their size and call stack to choose from; the oldest was freed\n",
                 input.c_str(), static_cast<unsigned long long>(r.ambiguousFrees));
  if (r.attached)
    std::fprintf(stderr, "strata import: warning: %s: heaptrack attached to a running process: "
                 "what was allocated before is not in the trace\n", input.c_str());
  std::printf("imported %s: %llu lines -> %llu events, %llu objects, %llu sites, %llu modules "
              "in %s\n", input.c_str(), static_cast<unsigned long long>(r.lines),
              static_cast<unsigned long long>(r.events), static_cast<unsigned long long>(r.objects),
              static_cast<unsigned long long>(r.sites), static_cast<unsigned long long>(r.modules),
              output.c_str());
  return 0;
}

// Parses the arguments and converts.
int runImport(std::span<char* const> args) {
  Formats f;
  const support::Operands parsed = support::parseOptions(args, optionTable(f));
  const std::string& from = f.from;
  const std::string& output = f.output;
  if (parsed.dashDash) throw support::UsageError("unexpected '--' (import takes an input FILE)");
  std::string input;
  if (parsed.operands.size() > 1)
    throw support::UsageError("give one input FILE (got '" + parsed.operands[0] + "' and '" +
                              parsed.operands[1] + "')");
  if (!parsed.operands.empty()) input = parsed.operands[0];
  if (from.empty()) throw support::UsageError("missing --from mtrace|heaptrack");
  if (from != "mtrace" && from != "heaptrack")
    throw support::UsageError("unknown input format '" + from + "' (supported: mtrace, heaptrack)");
  if (input.empty()) throw support::UsageError("missing the input FILE");
  if (output.empty()) throw support::UsageError("missing -o TRACE");
  if (input == "-") input = "/dev/stdin";
  const tt::ChunkCompression compression =
      f.noCompress ? tt::ChunkCompression::No : tt::ChunkCompression::Yes;
  if (from == "heaptrack") return convertHeaptrack(input, output, compression);
  const tt::MtraceImportResult r = tt::importMtrace(input, output, compression);
  if (r.unknownFrees != 0)
    std::fprintf(stderr, "strata import: warning: %s: skipped %llu free(s) of addresses not "
                 "allocated while tracing\n", input.c_str(),
                 static_cast<unsigned long long>(r.unknownFrees));
  if (r.unknownReallocs != 0)
    std::fprintf(stderr, "strata import: warning: %s: %llu realloc(s) of addresses not "
                 "allocated while tracing, imported as realloc(NULL, n)\n", input.c_str(),
                 static_cast<unsigned long long>(r.unknownReallocs));
  if (r.reusedAddresses != 0)
    std::fprintf(stderr, "strata import: warning: %s: %llu allocation(s) returned an address "
                 "still live (its free was not traced); the older object is left live\n",
                 input.c_str(), static_cast<unsigned long long>(r.reusedAddresses));
  std::printf("imported %s: %llu lines -> %llu events, %llu objects in %s\n", input.c_str(),
              static_cast<unsigned long long>(r.lines), static_cast<unsigned long long>(r.events),
              static_cast<unsigned long long>(r.objects), output.c_str());
  return 0;
}

}  // namespace

const Command kImportCommand{"import", "convert glibc mtrace or heaptrack output to a trace",
                             kHelp, &runImport};

}  // namespace strata::cli
