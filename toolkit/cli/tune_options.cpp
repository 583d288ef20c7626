// `strata tune`'s options, one table (toolkit/support/options.hpp): parsing, the values each
// takes and the options part of the help come from it.
#include "cli/tune_options.hpp"

#include "tune/tune_spaces.hpp"

namespace strata::cli::tune_options {

using namespace strata::tune;  // the component this command drives
namespace {

using support::badValue;

// --budget: a count of replays, or seconds ("90s") or minutes ("5m") of searching.
void setBudget(TuneOptions& o, const std::string& v) {
  constexpr std::string_view kWhy = "replays, or seconds as 90s, minutes as 5m";
  const char unit = v.empty() ? '\0' : v.back();
  if (unit == 's' || unit == 'm') {
    const auto x = support::parseNumber(std::string_view(v).substr(0, v.size() - 1));
    if (!x || *x <= 0 || *x > 7 * 24 * 3600) throw badValue("--budget", v, kWhy);
    o.budgetSeconds = *x * (unit == 'm' ? 60 : 1);
    o.budgetReplays = 0;
    o.budgetText = v;
    return;
  }
  const auto n = support::parseUnsigned(v);
  if (!n || *n == 0 || *n > 1000000) throw badValue("--budget", v, kWhy);
  o.budgetReplays = *n;
  o.budgetText = v + " replays";
}

// A value that must not be empty.
support::Binding nonEmpty(std::string_view name, std::string& target) {
  return [name, &target](const std::string& v) {
    if (v.empty()) throw badValue(name, v);
    target = v;
  };
}

}  // namespace

std::vector<support::Option> optionTable(TuneOptions& o) {
  return {
      {.name = "--goal", .value = "GOAL",
       .help = "balanced (default: geometric mean of the time and peak heap\n"
               "ratios), time, or memory (peak heap)",
       .bind = [&o](const std::string& v) {
         if (v == "balanced") o.goal = Goal::Balanced;
         else if (v == "time") o.goal = Goal::Time;
         else if (v == "memory") o.goal = Goal::Memory;
         else throw badValue("--goal", v, "balanced, time or memory");
       }},
      {.name = "--budget", .value = "N|Ns|Nm",
       .help = "replays in all (default 500), or seconds/minutes of searching;\n"
               "shared among the allocators",
       .bind = [&o](const std::string& v) { setBudget(o, v); }},
      {.name = "--repeat", .value = "N",
       .help = "replays of each setting, the median used (default 3)",
       .bind = support::numberIn("--repeat", o.repeat, 1, 100, "1 to 100")},
      {.name = "--seed", .value = "N", .help = "fixes the order settings are tried in (default 1)",
       .bind = support::numberIn("--seed", o.seed, 0, UINT64_MAX)},
      {.name = "--allocators", .value = "LIST",
       .help = "comma-separated allocators to tune (default: every one the\n"
               "search spaces list that is installed or built)",
       .bind = [&o](const std::string& v) {
         for (const std::string& a : support::splitList(v)) {
           if (a.empty()) throw badValue("--allocators", v, "allocator names separated by commas");
           o.allocators.push_back(a);
         }
       }},
      {.name = "--compositions",
       .help = "also build the spaces' heap compositions with `strata build`\n"
               "and measure each as an allocator of its own",
       .bind = o.compositions},
      {.name = "--spaces", .value = "FILE",
       .help = "the search spaces (default: share/strata/tune-spaces.conf)",
       .bind = nonEmpty("--spaces", o.spaces)},
      {.name = "--threads", .value = "N",
       .help = "replay threads, as `strata replay --threads` (default 0)",
       .bind = support::numberIn("--threads", o.threads, 0, 4096, "0 to 4096")},
      {.name = "--out", .value = "DIR", .help = "where results go (default ./strata-tune)",
       .bind = nonEmpty("--out", o.outDir)},
      {.name = "--no-live", .help = "with a command: do not run it live", .bind = {o.live, false}},
      {.name = "--no-plots", .help = "skip the plot", .bind = {o.plots, false}},
      {.name = "--json", .help = "print tune.json to stdout instead of the tables", .bind = o.json},
  };
}

TuneOptions parseTuneOptions(std::span<char* const> args) {
  TuneOptions o;
  const support::Operands rest = support::parseOptions(args, optionTable(o));
  if (rest.dashDash && rest.command.empty())
    throw support::UsageError("missing the COMMAND to record after '--'");
  o.traces = rest.operands;
  o.command = rest.command;
  if (o.traces.empty() && o.command.empty())
    throw support::UsageError("give the TRACE files to tune on, or '-- COMMAND'");
  if (!o.traces.empty() && !o.command.empty())
    throw support::UsageError("give trace files or '-- COMMAND', not both");
  if (o.spaces.empty()) o.spaces = defaultSpacesPath();
  return o;
}

std::string optionsHelp() {
  TuneOptions unused;
  return support::formatOptions(optionTable(unused), 24);
}

}  // namespace strata::cli::tune_options
