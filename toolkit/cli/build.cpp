// `strata build COMPOSITION|HEADER -o LIBRARY`: a heap composition made into a drop-in malloc
// library in one command (the work is toolkit/build's; this file is the options and the
// messages).
#include <cstdio>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "build/build_library.hpp"
#include "cli/command.hpp"
#include "support/error.hpp"
#include "support/options.hpp"
#include "support/process.hpp"

namespace strata::cli {

using namespace strata::build;  // the component this command drives
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kAbout =
    "usage: strata build COMPOSITION -o LIBRARY [OPTIONS]\n"
    "       strata build HEADER [--type NAME] -o LIBRARY [OPTIONS]\n"
    "\n"
    "Makes a heap composition a drop-in malloc library: writes a source file that includes\n"
    "strata/strata.hpp (and HEADER), exports the heap through strata::MallocShim with\n"
    "STRATA_DEFINE_MALLOC, compiles and links it as Strata's own libraries are built (hidden\n"
    "visibility, -fno-builtin, no exceptions or RTTI, no libstdc++), and checks that the\n"
    "library preloads and takes over malloc and free.\n"
    "\n"
    "COMPOSITION is a heap type, e.g.\n"
    "  'strata::LockedHeap<strata::SpinLock, strata::KingsleyHeap<strata::MmapHeap>>'\n"
    "HEADER is a header that defines the heap type: an existing file, or any name ending in\n"
    ".h, .hpp, .hh or .hxx. It is included after strata/strata.hpp, and the heap is the type\n"
    "named Heap at global scope (using Heap = ...;) unless --type names another. The heap\n"
    "must be safe to call from any thread (LockedHeap, ForkSafeHeap, a thread layer).\n"
    "\n";

constexpr std::string_view kNotes =
    "\n"
    "The compiler is $CXX, else c++. Strata's headers are looked for in $STRATA_INCLUDE_DIR,\n"
    "then the include/ directory beside the strata executable's bin/ (an install), then the\n"
    "source tree strata was built from. When the composition does not compile, the\n"
    "compiler's first error is shown (a layer over something that is not a heap names the\n"
    "concept it fails, e.g. Heap or SizedHeap) and its whole output is saved in LIBRARY.log.\n"
    "\n"
    "Exit status: 0 when the library is built and works preloaded; 1 when the composition does\n"
    "not compile, or the library does not take over malloc (it is then kept, and the reason\n"
    "printed); 2 for a wrong invocation, a missing header, no compiler or no Strata headers.\n"
    "\n"
    "examples: strata build 'strata::LockedHeap<strata::SpinLock, strata::KingsleyHeap<strata::MmapHeap>>' -o libmine.so\n"
    "          strata build myheap.hpp -o libmine.so && strata run --allocator ./libmine.so -- ./app\n";

// A value that must not be empty: "--type needs a NAME" when it is.
support::Binding nonEmpty(std::string needs, std::string& target) {
  return [needs, &target](const std::string& v) {
    if (v.empty()) throw support::UsageError(needs);
    target = v;
  };
}

// The options, bound to the request and the --verbose flag.
std::vector<support::Option> optionTable(BuildRequest& request, bool& verbose, bool& haveType) {
  return {
      {.name = "--output", .shortName = "-o", .value = "LIBRARY",
       .help = "the library to write (replaced only once it compiled)",
       .bind = nonEmpty("--output needs a LIBRARY", request.output), .needs = "a LIBRARY"},
      {.name = "--type", .value = "NAME", .help = "the heap type HEADER defines (default: Heap)",
       .bind = [&request, &haveType](const std::string& v) {
         if (v.empty()) throw support::UsageError("--type needs a NAME");
         request.type = v;
         haveType = true;
       },
       .needs = "a NAME"},
      {.name = "--include-dir", .shortName = "-I", .value = "DIR",
       .help = "where HEADER's own includes are (repeatable)",
       .bind = [&request](const std::string& v) {
         if (v.empty()) throw support::UsageError("-I needs a DIR");
         request.includeDirs.push_back(v);
       },
       .needs = "a DIR", .glued = true},
      {.name = "--cxxflags", .value = "'FLAGS'",
       .help = "more compiler flags, split at spaces, after the\n"
               "defaults (-std=c++20 -O2 -DNDEBUG): '-O3 -march=native'",
       .bind = [&request](const std::string& v) {
         request.cxxFlags += (request.cxxFlags.empty() ? "" : " ") + v;
       },
       .needs = "FLAGS"},
      {.name = "--verbose", .shortName = "-v",
       .help = "print the source, the compiler's command line and all it\nprinted",
       .bind = verbose},
  };
}

const std::string kHelp = [] {
  BuildRequest request;
  bool verbose = false, haveType = false;
  return std::string(kAbout) + support::formatOptions(optionTable(request, verbose, haveType), 33) +
         std::string(kNotes);
}();

// The arguments as a request: one COMPOSITION or HEADER, and -o. Throws UsageError.
BuildRequest parseRequest(std::span<char* const> args, bool& verbose) {
  BuildRequest request;
  bool haveType = false;
  const support::Operands rest = support::parseOptions(args, optionTable(request, verbose, haveType));
  if (rest.dashDash) throw support::UsageError("unexpected '--'");
  if (rest.operands.empty()) throw support::UsageError("missing the COMPOSITION or HEADER to build");
  if (rest.operands.size() > 1)
    throw support::UsageError("give one COMPOSITION or HEADER (a composition with spaces needs quotes)");
  if (request.output.empty()) throw support::UsageError("missing -o LIBRARY");
  const std::string& what = rest.operands[0];
  if (looksLikeHeader(what)) {
    request.header = what;
  } else {
    if (haveType)
      throw support::UsageError("--type names the heap of a HEADER; '" + what + "' is a composition");
    request.composition = what;
  }
  return request;
}

// The compiler's first error (or all it printed), what a header lacks, and where the log is.
int reportCompileFailure(const BuildRequest& request, const BuildResult& r, bool verbose) {
  std::fprintf(stderr, "strata build: %s:\n", failureLine(request, r).c_str());
  if (!verbose) std::fputs(r.firstError.empty() ? r.fullLog.c_str() : r.firstError.c_str(), stderr);
  if (!request.header.empty() && missingHeapType(r))
    std::fprintf(stderr, "strata build: %s must define the heap type %s at global scope (using %s = ...;), "
                         "or name its type with --type\n",
                 request.header.c_str(), request.type.c_str(), request.type.c_str());
  if (const std::string log = keepBuildLog(request, r); !log.empty())
    std::fprintf(stderr, "strata build: the compiler's whole output is in %s\n", log.c_str());
  else if (!verbose)
    std::fputs("strata build: run with --verbose to see all the compiler printed\n", stderr);
  return 1;
}

int runBuild(std::span<char* const> args) {
  bool verbose = false;
  const BuildRequest request = parseRequest(args, verbose);
  const BuildResult r = buildLibrary(request);
  if (verbose && !r.command.empty()) {
    std::fprintf(stderr, "strata build: strata-build.cpp:\n%s", r.glue.c_str());
    std::fprintf(stderr, "strata build: %s\n", support::shellLine(r.command).c_str());
    std::fputs(r.fullLog.c_str(), stderr);
  }
  switch (r.status) {
    case BuildStatus::BadRequest: throw support::Error(failureLine(request, r), 2);
    case BuildStatus::CompileFailed: return reportCompileFailure(request, r, verbose);
    case BuildStatus::ProbeFailed: throw support::Error(failureLine(request, r));
    case BuildStatus::Built: break;
  }
  keepBuildLog(request, r);  // an earlier failed build's log is stale now
  std::printf("built %s (%s) in %.1f s; use it: strata run --allocator %s -- ./app, or LD_PRELOAD=%s ./app\n",
              request.output.c_str(), r.heapType.c_str(), r.seconds, runSpecPath(request.output).c_str(),
              fs::absolute(request.output).lexically_normal().c_str());
  if (!r.fullLog.empty() && !verbose) std::fputs(r.fullLog.c_str(), stderr);  // the compiler's warnings
  return 0;
}

}  // namespace

const Command kBuildCommand{"build", "make a heap composition a drop-in malloc library", kHelp,
                            &runBuild};

}  // namespace strata::cli
