// `strata record [-o FILE] -- COMMAND [ARGS...]`: runs COMMAND with the recorder
// (libstrata-record.so, toolkit/record/) preloaded, waits for it, prints what was recorded, and
// exits with COMMAND's status. The work is the record component's (record_session.hpp);
// docs/toolkit/recording.md describes the recorder.
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.hpp"
#include "support/files.hpp"
#include "support/options.hpp"
#include "record/record_session.hpp"
#include "strata/protocol/recorder_environment.hpp"

namespace strata::cli {
namespace {

namespace env = protocol::env;

constexpr std::string_view kUsage =
    "usage: strata record [-o FILE] [--clock tsc|fine|coarse] [--touch-min SIZE|off]\n"
    "                     [--touch-all] [--sites] [--no-compress] -- COMMAND [ARGS...]\n"
    "\n"
    "Runs COMMAND with Strata's recorder preloaded and writes every malloc, calloc, realloc,\n"
    "free, aligned allocation and operator new/delete it makes (and its reap/region calls when\n"
    "it uses Strata's C APIs), with the thread and time of each, to a trace file that\n"
    "`strata stats`, `strata replay` and `strata compare` read.\n"
    "\n";

constexpr std::string_view kAfterOptions =
    "\n"
    "Every other process COMMAND starts (fork, or programs it runs) writes FILE.<pid>. A\n"
    "program that crashes, is killed or calls _exit leaves a valid trace of everything up to\n"
    "that point. A summary of each trace written goes to stderr.\n"
    "\n"
    "Exit status: COMMAND's (128+N when it was killed by signal N); 127 when COMMAND is not\n"
    "found, 126 when it cannot be executed; 2 for a wrong invocation or when the recorder\n"
    "library is not built; 1 when FILE cannot be written.\n"
    "\n"
    "example: strata record -o ls.trace -- ls -l /usr\n";

// The options, bound to the request they fill; the values are checked as they are given.
std::vector<support::Option> optionTable(record::RecordRequest& r) {
  record::RecordSettings& s = r.settings;
  return {
      {.name = "--output", .shortName = "-o", .value = "FILE",
       .help = "the trace file (default: <name of COMMAND>.trace here)",
       .bind = [&r](const std::string& v) {
         if (v.empty()) throw support::UsageError("the output FILE is empty");
         r.file = v;
       },
       .needs = "a FILE"},
      {.name = "--clock", .value = "tsc|fine|coarse",
       .help = "the time stamps: tsc (default where the kernel's clocksource\n"
               "is the TSC) reads the CPU's time-stamp counter, calibrated\n"
               "against CLOCK_MONOTONIC; fine is CLOCK_MONOTONIC itself (the\n"
               "default elsewhere); coarse is CLOCK_MONOTONIC_COARSE, cheaper\n"
               "but advancing only every kernel tick (1-4 ms)",
       .bind = [&s](const std::string& v) {
         if (v != env::kClockTsc && v != env::kClockFine && v != env::kClockCoarse)
           throw support::UsageError("--clock takes tsc, fine or coarse, not '" + v + "'");
         s.clock = v;
       },
       .needs = "tsc, fine or coarse"},
      {.name = "--touch-min", .value = "SIZE|off",
       .help = "record how much of each object of at least SIZE bytes the\n"
               "program touched (default and smallest: two pages), so that a\n"
               "replay writes only that; off: replays write every byte. Each\n"
               "such object's pages are given back to the kernel when it is\n"
               "made and faulted in again as the program touches them, the\n"
               "main cost of recording programs with many large objects.\n"
               "Objects of a size the program keeps writing whole are\n"
               "measured one in 16 (the others count as touched whole)",
       .bind = [&s](const std::string& v) {
         if (v == env::kTouchOff) {
           s.touchMin = v;
           return;
         }
         const std::optional<std::uint64_t> n = support::parseSize(v);
         if (!n || *n == 0)
           throw support::UsageError(
               "--touch-min takes a size (bytes, or with K, M, G) or off, not '" + v + "'");
         s.touchMin = std::to_string(*n);
       },
       .needs = "a SIZE or off"},
      {.name = "--touch-all", .help = "measure every such object", .bind = s.touchAll},
      {.name = "--sites",
       .help = "also record where each object was allocated: the stack of\n"
               "return addresses (up to 8 deep) at each allocating call, and\n"
               "the loaded objects, for `strata stats --sites`. Walking the\n"
               "stack makes each allocation much slower (docs/toolkit/recording.md)",
       .bind = s.sites},
      {.name = "--no-compress",
       .help = "write plain event chunks (trace format version 2) rather than\n"
               "zstd-compressed ones (version 3)",
       .bind = s.plain},
  };
}

// The help: usage, then the options from the table, then the rest.
const std::string kHelp = [] {
  record::RecordRequest unused;
  return std::string(kUsage) + support::formatOptions(optionTable(unused), 27) +
         std::string(kAfterOptions);
}();

// Parses the arguments into the request; throws support::UsageError.
record::RecordRequest parseRequest(std::span<char* const> args) {
  record::RecordRequest request;
  const std::vector<support::Option> table = optionTable(request);
  request.command = commandAfterDashDash(support::parseOptions(args, table), "record");
  if (request.file.empty()) request.file = support::baseName(request.command[0]) + ".trace";
  return request;
}

// Parses the arguments, runs the command under the recorder and reports; see kHelp.
int runRecord(std::span<char* const> args) {
  const record::RecordRequest request = parseRequest(args);
  const record::RecordResult result = record::recordCommand(request);
  for (const std::string& line : record::runLines(result, request.command[0]))
    note("strata record: " + line);
  for (const std::string& line : record::summaryLines(result)) note("strata record: " + line);
  return result.process.shellStatus();
}

}  // namespace

const Command kRecordCommand{"record", "record a program's allocations into a trace file", kHelp,
                             &runRecord};

}  // namespace strata::cli
