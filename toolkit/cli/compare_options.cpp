// `strata compare`'s command line (compare_steps.hpp), parsed with the subcommands' shared
// option parser (toolkit/support/options.hpp).
#include <algorithm>

#include "compare_steps.hpp"
#include "options.hpp"

namespace strata::cli::compare {

std::string parseOptions(std::span<char* const> args, Options& o) {
  static constexpr support::OptionSpec kOptions[] = {
      {"--allocators", true}, {"--out", true},     {"--runs", true},       {"--threads", true},
      {"--heap-limit", true}, {"--size", true},    {"--seed", true},       {"--process", true},
      {"--no-plots"},         {"--json"},          {"--no-live"},          {"--live-only"},
      {"--all-processes"},    {"--sites"}};
  support::ParsedArgs parsed;
  if (std::string err = support::parseArgs(args, kOptions, parsed); !err.empty()) return err;
  if (parsed.dashDash && parsed.command.empty()) return "missing the COMMAND to record after '--'";
  o.traces = parsed.operands;
  o.command = parsed.command;
  bool haveAllocators = false;
  for (const support::GivenOption& g : parsed.options) {
    const std::string& value = g.value;
    const std::string bad = "invalid value '" + value + "' for " + std::string(g.name);
    if (g.name == "--no-plots") {
      o.plots = false;
    } else if (g.name == "--json") {
      o.json = true;
    } else if (g.name == "--no-live") {
      o.live = false;
    } else if (g.name == "--live-only") {
      o.liveOnly = true;
    } else if (g.name == "--all-processes") {
      o.allProcesses = true;
    } else if (g.name == "--sites") {
      o.sites = true;
    } else if (g.name == "--allocators") {
      for (const std::string& spec : registry::splitSpecList(value)) o.allocators.push_back(spec);
      haveAllocators = true;
    } else if (g.name == "--process") {
      for (const std::string& name : support::splitList(value)) {
        if (name.empty()) return bad + " (program names separated by commas)";
        o.processes.push_back(name);
      }
    } else if (g.name == "--out") {
      if (value.empty()) return bad;
      o.outDir = value;
    } else if (g.name == "--runs") {
      const auto n = support::parseUnsigned(value);
      if (!n || *n == 0 || *n > 1000) return bad + " (1 to 1000)";
      o.runs = static_cast<unsigned>(*n);
    } else if (g.name == "--threads") {
      const auto n = support::parseUnsigned(value);
      if (!n || *n > 4096) return bad + " (0 to 4096)";
      o.threads = static_cast<unsigned>(*n);
    } else if (g.name == "--heap-limit") {
      const auto n = support::parseSize(value);
      if (!n) return bad + " (" + std::string(support::kSizeHelp) + ")";
      o.heapLimit = *n;
    } else if (g.name == "--size") {
      const auto x = support::parseNumber(value);
      if (!x || *x <= 0 || *x > 1000)
        return bad + " (more than 0, at most 1000: about that many million events)";
      o.size = *x;
    } else if (g.name == "--seed") {
      const auto n = support::parseUnsigned(value);
      if (!n) return bad;
      o.seed = *n;
    }
  }
  if (!o.traces.empty() && !o.command.empty()) return "give trace files or '-- COMMAND', not both";
  if (o.liveOnly && !o.live) return "--live-only and --no-live contradict each other";
  if (o.liveOnly && o.command.empty()) return "--live-only needs '-- COMMAND' to run";
  if (o.sites && o.liveOnly) return "--sites shows the traces' sites; --live-only records none";
  if (!haveAllocators)
    for (const registry::AllocatorInfo& info : registry::knownAllocators())
      o.allocators.emplace_back(info.name);
  // A name given twice is compared once.
  std::vector<std::string> unique;
  for (const std::string& name : o.allocators)
    if (std::find(unique.begin(), unique.end(), name) == unique.end()) unique.push_back(name);
  o.allocators = unique;
  return {};
}

}  // namespace strata::cli::compare
