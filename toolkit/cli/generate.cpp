// `strata generate NAME [--seed N] [--size X] [--no-compress] -o FILE` and `strata generate
// --list`: writes one of the bundled workloads (tracetools/workloads.hpp,
// docs/toolkit/workloads.md) as a trace.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.hpp"
#include "support/error.hpp"
#include "support/options.hpp"
#include "tracetools/workloads.hpp"

namespace strata::cli {
namespace {

namespace tt = strata::tracetools;

constexpr std::string_view kAbout =
    "usage: strata generate NAME [--seed N] [--size X] [--no-compress] -o FILE\n"
    "       strata generate --list\n"
    "\n"
    "Writes the bundled workload NAME as a trace FILE: a deterministic generator (the same\n"
    "NAME, seed and size give a byte-identical file) of a program's allocation pattern, for\n"
    "`strata stats`, `strata replay` and `strata compare`. docs/toolkit/workloads.md describes them.\n"
    "\n";

constexpr std::string_view kNotes =
    "\n"
    "Exit status: 0; 1 when FILE cannot be written; 2 for a wrong invocation or an unknown NAME.\n"
    "\n"
    "example: strata generate web-proxy --seed 7 -o proxy.trace\n";

// What the command line said; the numbers are checked once the NAME is known.
struct GenerateOptions {
  bool list = false;
  bool noCompress = false;
  std::string output, seedText = "1", sizeText = "1";
};

std::vector<support::Option> optionTable(GenerateOptions& o) {
  return {
      {.name = "--list", .help = "list the workloads", .bind = o.list},
      {.name = "--seed", .value = "N", .help = "the random seed (default 1)", .bind = o.seedText,
       .needs = "a number"},
      {.name = "--size", .value = "X",
       .help = "about X million events, in (0, 1000] (default 1); the workload's\n"
               "live memory scales with it",
       .bind = o.sizeText, .needs = "a number"},
      {.name = "--no-compress",
       .help = "write plain event chunks (format version 2) rather than zstd-compressed\n"
               "ones (version 3)",
       .bind = o.noCompress},
      {.name = "--output", .shortName = "-o", .value = "FILE", .help = "the trace to write (required)",
       .bind = o.output, .needs = "a FILE"},
  };
}

const std::string kHelp = [] {
  GenerateOptions unused;
  return std::string(kAbout) + support::formatOptions(optionTable(unused), 19) + std::string(kNotes);
}();

// "web-proxy, editor, server, steady".
std::string knownWorkloads() {
  std::string s;
  for (const tt::WorkloadInfo& w : tt::allWorkloads()) {
    if (!s.empty()) s += ", ";
    s += w.name;
  }
  return s;
}

// Prints the workloads with their descriptions.
int list() {
  for (const tt::WorkloadInfo& w : tt::allWorkloads())
    std::printf("%-10.*s %.*s\n", static_cast<int>(w.name.size()), w.name.data(),
                static_cast<int>(w.description.size()), w.description.data());
  return 0;
}

// Parses the arguments and writes the trace.
int runGenerate(std::span<char* const> args) {
  GenerateOptions o;
  const support::Operands parsed = support::parseOptions(args, optionTable(o));
  if (parsed.dashDash) throw support::UsageError("unexpected '--' (generate takes a workload NAME)");
  if (o.list) return list();
  const std::string& output = o.output;
  if (parsed.operands.size() > 1)
    throw support::UsageError("give one workload NAME (got '" + parsed.operands[0] + "' and '" +
                              parsed.operands[1] + "')");
  if (parsed.operands.empty())
    throw support::UsageError("missing the workload NAME (known: " + knownWorkloads() + ")");
  const std::string& name = parsed.operands[0];
  if (tt::findWorkload(name) == nullptr)
    throw support::Error("unknown workload '" + name + "'; known workloads: " + knownWorkloads(), 2);
  const std::optional<std::uint64_t> seedValue = support::parseUnsigned(o.seedText);
  if (!seedValue) throw support::UsageError("--seed wants an unsigned integer, not '" + o.seedText + "'");
  const std::optional<double> sizeValue = support::parseNumber(o.sizeText);
  if (!sizeValue || !(*sizeValue > 0) || *sizeValue > 1000)
    throw support::UsageError("--size wants a number in (0, 1000], not '" + o.sizeText + "'");
  const std::uint64_t seed = *seedValue;
  const double size = *sizeValue;
  if (output.empty()) throw support::UsageError("missing -o FILE");
  const std::uint64_t events = tt::generateWorkloadEvents(
      name, seed, size, output, o.noCompress ? tt::ChunkCompression::No : tt::ChunkCompression::Yes);
  std::fprintf(stderr, "strata generate: wrote %s: workload %s, seed %llu, size %g, %llu events\n",
               output.c_str(), name.c_str(), static_cast<unsigned long long>(seed), size,
               static_cast<unsigned long long>(events));
  return 0;
}

}  // namespace

const Command kGenerateCommand{"generate", "write one of the bundled workloads as a trace", kHelp,
                               &runGenerate};

}  // namespace strata::cli
