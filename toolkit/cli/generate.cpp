// `strata generate NAME [--seed N] [--size X] -o FILE` and `strata generate --list`: writes
// one of the bundled workloads (tracetools/workloads.hpp, docs/workloads.md) as a trace.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <optional>
#include <string>
#include <string_view>

#include "command.hpp"
#include "options.hpp"
#include "workloads.hpp"

namespace strata::cli {
namespace {

namespace tt = strata::tracetools;

constexpr std::string_view kHelp =
    "usage: strata generate NAME [--seed N] [--size X] -o FILE\n"
    "       strata generate --list\n"
    "\n"
    "Writes the bundled workload NAME as a trace FILE: a deterministic generator (the same\n"
    "NAME, seed and size give a byte-identical file) of a program's allocation pattern, for\n"
    "`strata stats`, `strata replay` and `strata compare`. docs/workloads.md describes them.\n"
    "\n"
    "  --list           list the workloads\n"
    "  --seed N         the random seed (default 1)\n"
    "  --size X         about X million events, in (0, 1000] (default 1); the workload's\n"
    "                   live memory scales with it\n"
    "  -o FILE, --output FILE   the trace to write (required)\n"
    "\n"
    "Exit status: 0; 1 when FILE cannot be written; 2 for a wrong invocation or an unknown NAME.\n"
    "\n"
    "example: strata generate web-proxy --seed 7 -o proxy.trace\n";

// A wrong invocation: the reason and the usage (command.hpp); exit status 2.
int usageError(const std::string& why) { return cli::usageError("generate", kHelp, why); }

// "web-proxy, editor, server".
std::string knownWorkloads() {
  std::string s;
  for (const tt::WorkloadInfo& w : tt::bundledWorkloads()) {
    if (!s.empty()) s += ", ";
    s += w.name;
  }
  return s;
}

// Prints the workloads with their descriptions.
int list() {
  for (const tt::WorkloadInfo& w : tt::bundledWorkloads())
    std::printf("%-10.*s %.*s\n", static_cast<int>(w.name.size()), w.name.data(),
                static_cast<int>(w.description.size()), w.description.data());
  return 0;
}

// Parses the arguments and writes the trace.
int runGenerate(std::span<char* const> args) {
  std::string name, output, seedText = "1", sizeText = "1";
  bool haveName = false;
  static constexpr support::OptionSpec kOptions[] = {
      {"--list"}, {"--seed", true, {}, "a number"}, {"--size", true, {}, "a number"},
      {"--output", true, "-o", "a FILE"}};
  support::ParsedArgs parsed;
  if (std::string err = support::parseArgs(args, kOptions, parsed); !err.empty())
    return usageError(err);
  if (parsed.dashDash) return usageError("unexpected '--' (generate takes a workload NAME)");
  for (const support::GivenOption& o : parsed.options) {
    if (o.name == "--list") return list();
    if (o.name == "--seed") seedText = o.value;
    else if (o.name == "--size") sizeText = o.value;
    else output = o.value;
  }
  if (parsed.operands.size() > 1)
    return usageError("give one workload NAME (got '" + parsed.operands[0] + "' and '" +
                      parsed.operands[1] + "')");
  if (!parsed.operands.empty()) {
    name = parsed.operands[0];
    haveName = true;
  }
  if (!haveName) return usageError("missing the workload NAME (known: " + knownWorkloads() + ")");
  if (tt::findWorkload(name) == nullptr) {
    std::fprintf(stderr, "strata generate: unknown workload '%s'; known workloads: %s\n",
                 name.c_str(), knownWorkloads().c_str());
    return 2;
  }
  const std::optional<std::uint64_t> seedValue = support::parseUnsigned(seedText);
  if (!seedValue) return usageError("--seed wants an unsigned integer, not '" + seedText + "'");
  const std::optional<double> sizeValue = support::parseNumber(sizeText);
  if (!sizeValue || !(*sizeValue > 0) || *sizeValue > 1000)
    return usageError("--size wants a number in (0, 1000], not '" + sizeText + "'");
  const std::uint64_t seed = *seedValue;
  const double size = *sizeValue;
  if (output.empty()) return usageError("missing -o FILE");
  try {
    const std::uint64_t events = tt::generateWorkloadEvents(name, seed, size, output);
    std::fprintf(stderr, "strata generate: wrote %s: workload %s, seed %llu, size %g, %llu events\n",
                 output.c_str(), name.c_str(), static_cast<unsigned long long>(seed), size,
                 static_cast<unsigned long long>(events));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strata generate: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace

const Command kGenerateCommand{"generate", "write one of the bundled workloads as a trace", kHelp,
                               &runGenerate};

}  // namespace strata::cli
