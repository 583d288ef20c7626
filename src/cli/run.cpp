// `strata run --allocator NAME -- COMMAND [ARGS...]`: runs COMMAND with the allocator's
// library in front of LD_PRELOAD, by exec, so that COMMAND's exit status (or the signal
// that ended it) is strata's.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "allocator_registry.hpp"
#include "command.hpp"
#include "options.hpp"

namespace strata::cli {
namespace {

constexpr std::string_view kHelp =
    "usage: strata run --allocator NAME -- COMMAND [ARGS...]\n"
    "\n"
    "Runs COMMAND on the allocator NAME: its library is put in front of LD_PRELOAD (anything\n"
    "already there stays after it; for glibc LD_PRELOAD is left as it is) and strata execs\n"
    "COMMAND, so the exit status is COMMAND's own. `strata allocators` lists the names.\n"
    "\n"
    "  --allocator NAME, --allocator=NAME   the allocator to run on (required)\n"
    "\n"
    "Exit status: COMMAND's; 2 for a wrong invocation or an allocator that is not installed\n"
    "or not built; 127 when COMMAND is not found, 126 when it cannot be executed.\n"
    "\n"
    "example: strata run --allocator strata -- python3 -c 'print(42)'\n";

// A wrong invocation: the reason and the usage (command.hpp); exit status 2.
int usageError(const std::string& why) { return cli::usageError("run", kHelp, why); }

// Parses the arguments, sets LD_PRELOAD and execs the command; returns only on an error.
int runRun(std::span<char* const> args) {
  std::string allocator;
  bool haveAllocator = false;
  static constexpr support::OptionSpec kOptions[] = {{"--allocator", true, {}, "a NAME"}};
  support::ParsedArgs parsed;
  if (std::string err = support::parseArgs(args, kOptions, parsed); !err.empty())
    return usageError(err);
  if (!parsed.operands.empty())
    return usageError("missing '--' before the command '" + parsed.operands[0] + "'");
  for (const support::GivenOption& o : parsed.options) {
    allocator = o.value;
    haveAllocator = true;
  }
  if (!haveAllocator) return usageError("missing --allocator NAME (known: " + knownAllocatorNames() + ")");
  const AllocatorInfo* info = findAllocator(allocator);
  if (info == nullptr) {
    std::fprintf(stderr, "strata run: unknown allocator '%s'; known allocators: %s\n",
                 allocator.c_str(), knownAllocatorNames().c_str());
    return 2;
  }
  if (!parsed.dashDash) return usageError("missing '--' and the COMMAND to run");
  if (parsed.command.empty()) return usageError("missing the COMMAND to run after '--'");
  // The command is the tail of main's argv, null-terminated, as execvp wants it.
  char* const* command = args.data() + (args.size() - parsed.command.size());

  const Location where = locate(*info, defaultSearchDirs());
  if (!where.available) {
    std::fprintf(stderr, "strata run: allocator '%s' is not %s: %s\n", allocator.c_str(),
                 info->origin == Origin::Peer ? "installed" : "built", howToGet(where).c_str());
    return 2;
  }
  if (info->origin != Origin::System) {
    if (where.path.find_first_of(": \t") != std::string::npos) {
      std::fprintf(stderr, "strata run: the library path '%s' holds a space or colon, which "
                   "LD_PRELOAD cannot carry\n", where.path.c_str());
      return 2;
    }
    std::string preload = where.path;
    const char* existing = std::getenv("LD_PRELOAD");
    if (existing != nullptr && existing[0] != '\0') preload += std::string(":") + existing;
    if (::setenv("LD_PRELOAD", preload.c_str(), 1) != 0) {
      std::fprintf(stderr, "strata run: cannot set LD_PRELOAD: %s\n", std::strerror(errno));
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
