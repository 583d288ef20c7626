// `strata doctor`: whether every file the command starts or loads is in place (the helper
// table of support/helpers.hpp and Strata's malloc libraries from the registry), and what
// this machine has of the rest (the peer allocators, Python with matplotlib, Valgrind).
// With --targets, the CMake targets that build those files, for the build's check that the
// main job's target (strata_toolkit) builds every one.
#include <cstdio>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "registry/allocator_registry.hpp"
#include "cli/command.hpp"
#include "support/error.hpp"
#include "support/helpers.hpp"
#include "support/python.hpp"
#include "drag/valgrind_run.hpp"

namespace strata::cli {
namespace {

constexpr std::string_view kHelp =
    "usage: strata doctor [--targets]\n"
    "\n"
    "Checks that every file strata starts or loads is in place: the helper programs beside\n"
    "it (strata-probe, strata-replayer, strata-exec), the recorder and Strata's malloc\n"
    "libraries in its library directory (<dir of strata>/../lib, or $STRATA_LIB_DIR), and the\n"
    "plot scripts and tune's search spaces in <dir of strata>/../share/strata. Then says\n"
    "which of the other allocators, of Python with matplotlib (plots) and of Valgrind\n"
    "(strata drag) this machine has. One line each.\n"
    "\n"
    "  --targets   print only the CMake targets that build the files strata needs, one a line\n"
    "              (\"TARGET optional\" for one a build may leave out)\n"
    "\n"
    "exit status: 0 when every file strata needs is there (an optional one, such as the\n"
    "Valgrind tool of strata drag, may be missing); 1 when one is missing; 2 on bad usage.\n";

// Every CMake target that builds a file strata needs, the command's own included, each with
// " optional" after it when the build may leave it out.
std::set<std::string> neededTargets() {
  std::set<std::string> targets{"strata_cli"};
  for (const support::Helper& h : support::helpers())
    targets.emplace(std::string(h.cmakeTarget) + (h.optional ? " optional" : ""));
  for (const registry::AllocatorInfo& a : registry::knownAllocators())
    if (a.origin == registry::Origin::Strata) targets.emplace(a.cmakeTarget);
  return targets;
}

// One line for a file strata needs; true when it is there (or optional).
bool checkFile(std::string_view file, const std::string& path, bool there,
               std::string_view note, bool optional) {
  const char* status = there ? "ok" : optional ? "absent" : "MISSING";
  std::printf("  %-8s %-24.*s %s", status, static_cast<int>(file.size()), file.data(),
              path.empty() ? "(cannot tell where)" : path.c_str());
  if (!there)
    std::printf(optional ? "  (%.*s)" : "  (build the CMake target strata_toolkit; %.*s)",
                static_cast<int>(note.size()), note.data());
  std::printf("\n");
  return there || optional;
}

int runDoctor(std::span<char* const> args) {
  bool targetsOnly = false;
  for (const char* a : args) {
    if (std::string_view(a) == "--targets") targetsOnly = true;
    else throw support::UsageError("unknown argument '" + std::string(a) + "'");
  }
  if (targetsOnly) {
    for (const std::string& t : neededTargets()) std::printf("%s\n", t.c_str());
    return 0;
  }

  bool ok = true;
  std::printf("strata %s: the files it starts or loads\n", STRATA_VERSION);
  for (const support::Helper& h : support::helpers())
    ok &= checkFile(h.file, support::helperPath(h.id), support::helperPresent(h.id), h.purpose,
                    h.optional);
  const std::vector<registry::Location> allocators = registry::locateAll(registry::defaultSearchDirs());
  for (const registry::Location& where : allocators) {
    if (where.info->origin != registry::Origin::Strata) continue;
    ok &= checkFile(where.info->library, where.path, where.available, "Strata's malloc library",
                    false);
  }

  std::printf("other allocators\n");
  for (const registry::Location& where : allocators) {
    if (where.info->origin == registry::Origin::Strata) continue;
    std::printf("  %-8s %-24.*s %s\n", where.available ? "ok" : "absent",
                static_cast<int>(where.info->name.size()), where.info->name.data(),
                where.available ? (where.path.empty() ? "(the C library's own)" : where.path.c_str())
                                : howToGet(where).c_str());
  }

  std::printf("programs some commands start\n");
  const std::optional<std::string> python = support::findPython();
  std::printf("  %-8s %-24s %s\n", python ? "ok" : "absent", "python3 + matplotlib",
              python ? python->c_str() : "no plots (Debian package: python3-matplotlib)");
  std::string why;
  const std::optional<drag::Valgrind> valgrind = drag::findValgrind(why);
  std::printf("  %-8s %-24s %s\n", valgrind ? "ok" : "absent", "valgrind",
              valgrind ? valgrind->program.c_str() : "no strata drag (Debian package: valgrind)");

  if (!ok) std::printf("strata doctor: a file strata needs is missing\n");
  return ok ? 0 : 1;
}

}  // namespace

const Command kDoctorCommand{"doctor", "check that every file strata needs is in place", kHelp,
                             runDoctor};

}  // namespace strata::cli
