// `strata run --allocator SPEC -- COMMAND [ARGS...]`: runs COMMAND with the allocator's
// library in front of LD_PRELOAD and its settings in the environment, through the one
// launcher (support::runChild), its stdio and signals its own, and ends as COMMAND ended: its
// exit status, or killed by the same signal.
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "registry/allocator_registry.hpp"
#include "registry/allocator_spec.hpp"
#include "cli/command.hpp"
#include "support/error.hpp"
#include "support/options.hpp"
#include "support/process.hpp"

namespace strata::cli {
namespace {

constexpr std::string_view kUsage =
    "usage: strata run --allocator SPEC -- COMMAND [ARGS...]\n"
    "\n"
    "Runs COMMAND on the allocator SPEC: its library is put in front of LD_PRELOAD (anything\n"
    "already there stays after it; for glibc LD_PRELOAD is left as it is), its settings are\n"
    "put in the environment, and strata execs COMMAND, so the exit status is COMMAND's own.\n"
    "\n";

constexpr std::string_view kAfterOptions =
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

struct Request {
  std::string allocator;
  bool haveAllocator = false;
  std::vector<std::string> command;
  bool dashDash = false;
};

std::vector<support::Option> optionTable(Request& r) {
  return {{.name = "--allocator", .value = "SPEC",
           .help = "the allocator to run on (required)",
           .bind = [&r](const std::string& v) {
             r.allocator = v;
             r.haveAllocator = true;
           },
           .needs = "a SPEC"}};
}

const std::string kHelp = [] {
  Request unused;
  return std::string(kUsage) + support::formatOptions(optionTable(unused), 20) +
         std::string(kAfterOptions);
}();

// Parses the arguments; throws support::UsageError.
Request parseRequest(std::span<char* const> args) {
  Request r;
  const std::vector<support::Option> table = optionTable(r);
  const support::Operands given = support::parseOptions(args, table);
  if (!given.operands.empty())
    throw support::UsageError("missing '--' before the command '" + given.operands[0] + "'");
  if (!r.haveAllocator)
    throw support::UsageError("missing --allocator SPEC (known: " + registry::knownAllocatorNames() +
                              ", or a library path)");
  r.command = given.command;
  r.dashDash = given.dashDash;
  return r;
}

// The allocator named, found and checked preloaded; throws support::Error (exit status 2).
registry::ResolvedAllocator usableAllocator(const registry::AllocatorSpec& spec) {
  registry::ResolvedAllocator resolved = resolve(spec, registry::defaultSearchDirs());
  if (!resolved.available)
    throw support::Error("allocator '" + spec.label + "' is not available: " + resolved.detail, 2);
  if (const registry::ProbeResult p = probe(resolved); !p.ok) throw support::Error(p.reason, 2);
  return resolved;
}

// Parses the arguments, runs the command on the allocator and passes its status on.
int runRun(std::span<char* const> args) {
  const Request r = parseRequest(args);
  const registry::AllocatorSpec spec = registry::parseSpec(r.allocator);
  if (!r.dashDash)
    throw support::UsageError("missing '--' and the COMMAND to run");
  if (r.command.empty()) throw support::UsageError("missing the COMMAND to run after '--'");
  const registry::ResolvedAllocator resolved = usableAllocator(spec);
  support::ChildSpec child;
  child.argv = r.command;
  child.preload = resolved.preload;
  registry::addSettings(spec, child.set);
  child.stdinPath.clear();    // the command's own stdin, stdout and stderr
  child.relaySignals = true;  // it stands in for strata
  const support::ProcessResult p = support::runChild(child);
  if (!p.started) {
    if (p.shellStatus() == 127)
      throw support::Error(r.command[0] + ": command not found", 127);
    throw support::Error("cannot execute " + r.command[0] + ": " + std::strerror(p.startErrno),
                         126);
  }
  // Killed: strata goes the same way, so the caller sees the signal as if strata had exec'd
  // the command.
  if (p.signal != 0) support::raiseAsOwn(p.signal);
  return p.shellStatus();
}

}  // namespace

const Command kRunCommand{"run", "run a program on one of the allocators (by LD_PRELOAD)", kHelp,
                          &runRun};

}  // namespace strata::cli
