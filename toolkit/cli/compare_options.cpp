// `strata compare`'s options, one table (toolkit/support/options.hpp): parsing, the values
// each takes and the options part of the help come from it.
#include "cli/compare_options.hpp"

namespace strata::cli::compare_options {

using namespace strata::compare;  // the component this command drives

std::vector<support::Option> optionTable(Options& o, bool& allocatorsGiven) {
  using support::badValue;
  return {
      {.name = "--allocators", .value = "LIST",
       .help = "comma-separated allocator specs (default: every one `strata\n"
               "allocators` lists); one that is not installed or built shows as\n"
               "unavailable. A spec is a name, a library path, either with\n"
               "settings: 'mine=./libmine.so,jemalloc:MALLOC_CONF=narenas:1'\n"
               "(`strata run --help`); may be given more than once",
       .bind = [&o, &allocatorsGiven](const std::string& v) {
         for (const std::string& spec : registry::splitSpecList(v)) o.allocators.push_back(spec);
         allocatorsGiven = true;
       }},
      {.name = "--out", .value = "DIR",
       .help = "where results go (default ./strata-compare; files are overwritten)",
       .bind = [&o](const std::string& v) {
         if (v.empty()) throw badValue("--out", v);
         o.outDir = v;
       }},
      {.name = "--runs", .value = "N",
       .help = "replays (and live runs) per allocator, the median is shown (default 3)",
       .bind = support::numberIn("--runs", o.runs, 1, 1000, "1 to 1000")},
      {.name = "--threads", .value = "N",
       .help = "replay threads: 0 the program's, as recorded (default); N a fixed\n"
               "pool of N; 1 the total order on one thread",
       .bind = support::numberIn("--threads", o.threads, 0, 4096, "0 to 4096")},
      {.name = "--heap-limit", .value = "SIZE",
       .help = "stop a replay whose heap exceeds SIZE (bytes, or K/M/G/T suffix)",
       .bind = [&o](const std::string& v) {
         const auto n = support::parseSize(v);
         if (!n) throw badValue("--heap-limit", v, support::kSizeHelp);
         o.heapLimit = *n;
       }},
      {.name = "--process", .value = "LIST",
       .help = "compare only the processes running these programs (basenames)",
       .bind = [&o](const std::string& v) {
         for (const std::string& name : support::splitList(v)) {
           if (name.empty()) throw badValue("--process", v, "program names separated by commas");
           o.processes.push_back(name);
         }
       }},
      {.name = "--all-processes", .help = "also compare processes that allocated under 1 MiB",
       .bind = o.allProcesses},
      {.name = "--no-live", .help = "do not run the command live", .bind = {o.live, false}},
      {.name = "--live-only", .help = "only run the command live: no recording, no replay",
       .bind = o.liveOnly},
      {.name = "--size", .value = "X",
       .help = "size of the bundled workloads, about X million events (default 1)",
       .bind = [&o](const std::string& v) {
         const auto x = support::parseNumber(v);
         if (!x || *x <= 0 || *x > 1000)
           throw badValue("--size", v, "more than 0, at most 1000: about that many million events");
         o.size = *x;
       }},
      {.name = "--seed", .value = "N", .help = "seed of the bundled workloads (default 1)",
       .bind = support::numberIn("--seed", o.seed, 0, UINT64_MAX)},
      {.name = "--no-plots", .help = "skip the plots", .bind = {o.plots, false}},
      {.name = "--json", .help = "print results.json to stdout instead of the tables",
       .bind = o.json},
      {.name = "--sites",
       .help = "for traces that carry allocation sites: after each trace's\n"
               "table, its top 10 sites by bytes live at the trace's peak (a\n"
               "figure of the trace, the same for every allocator); a COMMAND\n"
               "is recorded with its sites (strata record --sites)",
       .bind = o.sites},
  };
}

Options parseCompareOptions(std::span<char* const> args) {
  Options o;
  bool allocatorsGiven = false;
  const support::Operands rest = support::parseOptions(args, optionTable(o, allocatorsGiven));
  if (rest.dashDash && rest.command.empty())
    throw support::UsageError("missing the COMMAND to record after '--'");
  o.traces = rest.operands;
  o.command = rest.command;
  completeOptions(o, allocatorsGiven);
  return o;
}

std::string optionsHelp() {
  Options unused;
  bool given = false;
  return support::formatOptions(optionTable(unused, given), 24);
}

}  // namespace strata::cli::compare_options
