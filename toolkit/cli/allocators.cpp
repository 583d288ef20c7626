// `strata allocators`: the allocators strata knows, whether each is available here and where
// its library is; with --paths, the available ones only, one `NAME<TAB>LIBRARY` line each.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "registry/allocator_registry.hpp"
#include "cli/command.hpp"
#include "support/error.hpp"

namespace strata::cli {
namespace {

constexpr std::string_view kHelp =
    "usage: strata allocators [--paths]\n"
    "\n"
    "Lists the allocators strata knows, in this order: glibc, jemalloc, mimalloc, tcmalloc,\n"
    "strata-kingsley, strata-lea, strata, strata-secure; for each, whether it is available on this machine\n"
    "and the library `strata run --allocator NAME` preloads (or what to install or build).\n"
    "\n"
    "  --paths   only the available allocators, one line each: NAME<TAB>LIBRARY\n"
    "            (LIBRARY is empty for glibc, which needs nothing preloaded)\n"
    "\n"
    "Peers are looked for in the system's multiarch library directory (that of the running\n"
    "C library). Strata's own libraries are looked for in <dir of strata>/../lib, or in\n"
    "$STRATA_LIB_DIR when it is set.\n";

// Prints the table or the --paths lines; an unknown argument is a usage error.
int runAllocators(std::span<char* const> args) {
  bool paths = false;
  for (const char* a : args) {
    const std::string_view s = a;
    if (s != "--paths") throw support::UsageError("unknown argument '" + std::string(s) + "'");
    paths = true;
  }
  const std::vector<registry::Location> all = registry::locateAll(registry::defaultSearchDirs());
  if (paths) {
    for (const registry::Location& l : all)
      if (l.available)
        std::printf("%.*s\t%s\n", static_cast<int>(l.info->name.size()), l.info->name.data(),
                    l.path.c_str());
    return 0;
  }
  std::printf("%-16s %-14s %s\n", "allocator", "status", "library");
  for (const registry::Location& l : all) {
    const std::string name(l.info->name);
    if (l.info->origin == registry::Origin::System) {
      std::printf("%-16s %-14s %s\n", name.c_str(), "available", "(the C library's malloc)");
    } else if (l.available) {
      std::printf("%-16s %-14s %s\n", name.c_str(), "available", l.path.c_str());
    } else if (l.info->origin == registry::Origin::Peer) {
      std::printf("%-16s %-14s (install the Debian package %.*s)\n", name.c_str(),
                  "not installed", static_cast<int>(l.info->packages.size()),
                  l.info->packages.data());
    } else {
      std::printf("%-16s %-14s (build the target %.*s; looked for %s)\n", name.c_str(),
                  "not built", static_cast<int>(l.info->cmakeTarget.size()),
                  l.info->cmakeTarget.data(), l.path.c_str());
    }
  }
  return 0;
}

}  // namespace

const Command kAllocatorsCommand{"allocators",
                                 "list the allocators strata knows and where their libraries are",
                                 kHelp, &runAllocators};

}  // namespace strata::cli
