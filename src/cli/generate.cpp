// `strata generate NAME [--seed N] [--size X] -o FILE` and `strata generate --list`: writes
// one of the bundled workloads (tracetools/workloads.hpp, docs/workloads.md) as a trace.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>

#include "command.hpp"
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

// Parses a whole-string unsigned integer; false when malformed or out of range.
bool parseSeed(const std::string& s, std::uint64_t& v) {
  if (s.empty() || s[0] == '-' || s[0] == '+') return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long x = std::strtoull(s.c_str(), &end, 0);
  if (errno != 0 || end == s.c_str() || *end != '\0') return false;
  v = x;
  return true;
}

// Parses a whole-string positive number up to 1000.
bool parseSize(const std::string& s, double& v) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const double x = std::strtod(s.c_str(), &end);
  if (errno != 0 || end == s.c_str() || *end != '\0' || !std::isfinite(x) || !(x > 0) || x > 1000)
    return false;
  v = x;
  return true;
}

// Parses the arguments and writes the trace.
int runGenerate(std::span<char* const> args) {
  std::string name, output, seedText = "1", sizeText = "1";
  bool haveName = false;
  // The value of an option given as "--opt VALUE" or "--opt=VALUE".
  auto value = [&](std::size_t& i, std::string_view a, std::string_view opt, std::string& out) {
    if (a == opt) {
      if (i + 1 >= args.size()) return false;
      out = args[++i];
      return true;
    }
    out = a.substr(opt.size() + 1);
    return true;
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view a = args[i];
    if (a == "--list") return list();
    if (a == "--seed" || a.starts_with("--seed=")) {
      if (!value(i, a, "--seed", seedText)) return usageError("--seed needs a number");
    } else if (a == "--size" || a.starts_with("--size=")) {
      if (!value(i, a, "--size", sizeText)) return usageError("--size needs a number");
    } else if (a == "-o" || a == "--output" || a.starts_with("--output=")) {
      if (a == "-o") {
        if (i + 1 >= args.size()) return usageError("-o needs a FILE");
        output = args[++i];
      } else if (!value(i, a, "--output", output)) {
        return usageError("--output needs a FILE");
      }
    } else if (a.starts_with("-")) {
      return usageError("unknown option '" + std::string(a) + "'");
    } else if (haveName) {
      return usageError("give one workload NAME (got '" + name + "' and '" + std::string(a) + "')");
    } else {
      name = a;
      haveName = true;
    }
  }
  if (!haveName) return usageError("missing the workload NAME (known: " + knownWorkloads() + ")");
  if (tt::findWorkload(name) == nullptr) {
    std::fprintf(stderr, "strata generate: unknown workload '%s'; known workloads: %s\n",
                 name.c_str(), knownWorkloads().c_str());
    return 2;
  }
  std::uint64_t seed = 0;
  double size = 0;
  if (!parseSeed(seedText, seed)) return usageError("--seed wants an unsigned integer, not '" + seedText + "'");
  if (!parseSize(sizeText, size)) return usageError("--size wants a number in (0, 1000], not '" + sizeText + "'");
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
