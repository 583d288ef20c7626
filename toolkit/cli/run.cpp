// `strata run --allocator SPEC -- COMMAND [ARGS...]`: runs COMMAND with the allocator's
// library in front of LD_PRELOAD and its settings in the environment, by exec, so that
// COMMAND's exit status (or the signal that ended it) is strata's.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "allocator_registry.hpp"
#include "allocator_spec.hpp"
#include "command.hpp"
#include "options.hpp"

namespace strata::cli {
namespace {

constexpr std::string_view kHelp =
    "usage: strata run --allocator SPEC -- COMMAND [ARGS...]\n"
    "\n"
    "Runs COMMAND on the allocator SPEC: its library is put in front of LD_PRELOAD (anything\n"
    "already there stays after it; for glibc LD_PRELOAD is left as it is), its settings are\n"
    "put in the environment, and strata execs COMMAND, so the exit status is COMMAND's own.\n"
    "\n"
    "  --allocator SPEC, --allocator=SPEC   the allocator to run on (required)\n"
    "\n"
    "SPEC is [LABEL=]BASE[:NAME=VALUE...]: BASE is a name `strata allocators` lists or a\n"
    "library path (./libmine.so); each NAME=VALUE is set in COMMAND's environment, e.g.\n"
    "  jemalloc:MALLOC_CONF=narenas:1,dirty_decay_ms:0\n"
    "  glibc:GLIBC_TUNABLES=glibc.malloc.arena_max=2\n"
    "  strata:STRATA_PURGE_DELAY_MS=0:STRATA_DIRTY_SLOTS=1\n"
    "A library that cannot be preloaded, or that does not take over malloc and free, is an\n"
    "error before COMMAND runs.\n"
    "\n"
    "Exit status: COMMAND's; 2 for a wrong invocation or an allocator that is not installed,\n"
    "not built or does not work preloaded; 127 when COMMAND is not found, 126 when it cannot\n"
    "be executed.\n"
    "\n"
    "examples: strata run --allocator strata -- python3 -c 'print(42)'\n"
    "          strata run --allocator 'glibc:GLIBC_TUNABLES=glibc.malloc.arena_max=2' -- ./app\n";

// A wrong invocation: the reason and the usage (command.hpp); exit status 2.
int usageError(const std::string& why) { return cli::usageError("run", kHelp, why); }

// Parses the arguments, sets LD_PRELOAD and execs the command; returns only on an error.
int runRun(std::span<char* const> args) {
  std::string allocator;
  bool haveAllocator = false;
  static constexpr support::OptionSpec kOptions[] = {{"--allocator", true, {}, "a SPEC"}};
  support::ParsedArgs parsed;
  if (std::string err = support::parseArgs(args, kOptions, parsed); !err.empty())
    return usageError(err);
  if (!parsed.operands.empty())
    return usageError("missing '--' before the command '" + parsed.operands[0] + "'");
  for (const support::GivenOption& o : parsed.options) {
    allocator = o.value;
    haveAllocator = true;
  }
  if (!haveAllocator) return usageError("missing --allocator SPEC (known: " + knownAllocatorNames() + ", or a library path)");
  AllocatorSpec spec;
  if (const std::string err = parseSpec(allocator, spec); !err.empty()) {
    std::fprintf(stderr, "strata run: %s\n", err.c_str());
    return 2;
  }
  if (!parsed.dashDash) return usageError("missing '--' and the COMMAND to run");
  if (parsed.command.empty()) return usageError("missing the COMMAND to run after '--'");
  // The command is the tail of main's argv, null-terminated, as execvp wants it.
  char* const* command = args.data() + (args.size() - parsed.command.size());

  const ResolvedAllocator resolved = resolve(spec, defaultSearchDirs());
  if (!resolved.available) {
    std::fprintf(stderr, "strata run: allocator '%s' is not available: %s\n", spec.label.c_str(),
                 resolved.detail.c_str());
    return 2;
  }
  if (const ProbeResult p = probe(resolved); !p.ok) {
    std::fprintf(stderr, "strata run: %s\n", p.reason.c_str());
    return 2;
  }
  if (!resolved.preload.empty()) {
    std::string preload = resolved.preload;
    const char* existing = std::getenv("LD_PRELOAD");
    if (existing != nullptr && existing[0] != '\0') preload += std::string(":") + existing;
    if (::setenv("LD_PRELOAD", preload.c_str(), 1) != 0) {
      std::fprintf(stderr, "strata run: cannot set LD_PRELOAD: %s\n", std::strerror(errno));
      return 2;
    }
  }
  for (const std::string& setting : spec.settings) {
    const std::size_t eq = setting.find('=');
    if (::setenv(setting.substr(0, eq).c_str(), setting.c_str() + eq + 1, 1) != 0) {
      std::fprintf(stderr, "strata run: cannot set %s: %s\n", setting.c_str(), std::strerror(errno));
      return 2;
    }
  }
  std::fflush(nullptr);
  ::execvp(command[0], command);
  const int err = errno;
  if (err == ENOENT || err == ENOTDIR) {
    std::fprintf(stderr, "strata run: %s: command not found\n", command[0]);
    return 127;
  }
  std::fprintf(stderr, "strata run: cannot execute %s: %s\n", command[0], std::strerror(err));
  return 126;
}

}  // namespace

const Command kRunCommand{"run", "run a program on one of the allocators (by LD_PRELOAD)", kHelp,
                          &runRun};

}  // namespace strata::cli
