// Parsing `strata tune`'s command line (tune_options.hpp).
#include "tune_options.hpp"

#include "options.hpp"
#include "tune_spaces.hpp"

namespace strata::cli::tune {

std::string parseTuneOptions(std::span<char* const> args, TuneOptions& o) {
  static constexpr support::OptionSpec kOptions[] = {
      {"--goal", true},     {"--budget", true},  {"--repeat", true}, {"--seed", true},
      {"--allocators", true}, {"--spaces", true}, {"--threads", true}, {"--out", true},
      {"--compositions"},   {"--no-live"},       {"--no-plots"},     {"--json"}};
  support::ParsedArgs parsed;
  if (std::string err = support::parseArgs(args, kOptions, parsed); !err.empty()) return err;
  if (parsed.dashDash && parsed.command.empty()) return "missing the COMMAND to record after '--'";
  o.traces = parsed.operands;
  o.command = parsed.command;
  for (const support::GivenOption& g : parsed.options) {
    const std::string& v = g.value;
    const std::string bad = "invalid value '" + v + "' for " + std::string(g.name);
    if (g.name == "--goal") {
      if (v == "balanced") o.goal = Goal::Balanced;
      else if (v == "time") o.goal = Goal::Time;
      else if (v == "memory") o.goal = Goal::Memory;
      else return bad + " (balanced, time or memory)";
    } else if (g.name == "--budget") {
      const char unit = v.empty() ? '\0' : v.back();
      if (unit == 's' || unit == 'm') {
        const auto x = support::parseNumber(std::string_view(v).substr(0, v.size() - 1));
        if (!x || *x <= 0 || *x > 7 * 24 * 3600) return bad + " (replays, or seconds as 90s, minutes as 5m)";
        o.budgetSeconds = *x * (unit == 'm' ? 60 : 1);
        o.budgetReplays = 0;
        o.budgetText = v;
      } else {
        const auto n = support::parseUnsigned(v);
        if (!n || *n == 0 || *n > 1000000) return bad + " (replays, or seconds as 90s, minutes as 5m)";
        o.budgetReplays = *n;
        o.budgetText = v + " replays";
      }
    } else if (g.name == "--repeat") {
      const auto n = support::parseUnsigned(v);
      if (!n || *n == 0 || *n > 100) return bad + " (1 to 100)";
      o.repeat = static_cast<unsigned>(*n);
    } else if (g.name == "--seed") {
      const auto n = support::parseUnsigned(v);
      if (!n) return bad;
      o.seed = *n;
    } else if (g.name == "--threads") {
      const auto n = support::parseUnsigned(v);
      if (!n || *n > 4096) return bad + " (0 to 4096)";
      o.threads = static_cast<unsigned>(*n);
    } else if (g.name == "--allocators") {
      for (const std::string& a : support::splitList(v)) {
        if (a.empty()) return bad + " (allocator names separated by commas)";
        o.allocators.push_back(a);
      }
    } else if (g.name == "--spaces") {
      if (v.empty()) return bad;
      o.spaces = v;
    } else if (g.name == "--out") {
      if (v.empty()) return bad;
      o.outDir = v;
    } else if (g.name == "--compositions") {
      o.compositions = true;
    } else if (g.name == "--no-live") {
      o.live = false;
    } else if (g.name == "--no-plots") {
      o.plots = false;
    } else if (g.name == "--json") {
      o.json = true;
    }
  }
  if (o.traces.empty() && o.command.empty()) return "give the TRACE files to tune on, or '-- COMMAND'";
  if (!o.traces.empty() && !o.command.empty()) return "give trace files or '-- COMMAND', not both";
  if (o.spaces.empty()) o.spaces = defaultSpacesPath();
  return {};
}

}  // namespace strata::cli::tune
