// `strata build COMPOSITION|HEADER -o LIBRARY`: a heap composition made into a drop-in malloc
// library in one command (the work is build_library.cpp's; this file is the options and the
// messages).
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "build_library.hpp"
#include "command.hpp"
#include "options.hpp"
#include "process.hpp"

namespace strata::cli {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kHelp =
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
    "\n"
    "  -o LIBRARY, --output LIBRARY   the library to write (replaced only once it compiled)\n"
    "  --type NAME                    the heap type HEADER defines (default: Heap)\n"
    "  -I DIR, --include-dir DIR      where HEADER's own includes are (repeatable)\n"
    "  --cxxflags 'FLAGS'             more compiler flags, split at spaces, after the\n"
    "                                 defaults (-std=c++20 -O2 -DNDEBUG): '-O3 -march=native'\n"
    "  -v, --verbose                  print the source, the compiler's command line and all it\n"
    "                                 printed\n"
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

// A wrong invocation: the reason and the usage (command.hpp); exit status 2.
int usageError(const std::string& why) { return cli::usageError("build", kHelp, why); }

// The library as a spec `strata run` takes: a bare file name gets "./" so it reads as a path.
std::string asSpecPath(const std::string& output) {
  return output.find('/') == std::string::npos ? "./" + output : output;
}

// True when the first error says the header's heap type is not there.
bool missingType(const BuildResult& r) {
  for (const char* words : {"has not been declared", "does not name a type", "is not a member",
                            "was not declared", "no type named", "no member named", "undeclared"})
    if (r.firstError.find(words) != std::string::npos) return true;
  return false;
}

// Splits "-IDIR" into "-I" "DIR", which support::parseArgs would not know (not when it is
// the value of an option: --cxxflags -Ifoo).
std::vector<std::string> expandShortInclude(std::span<char* const> args) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view a = args[i];
    if (a == "--") {
      out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    const bool isValue = !out.empty() && (out.back() == "--cxxflags" || out.back() == "--type" ||
                                          out.back() == "-o" || out.back() == "--output" ||
                                          out.back() == "-I" || out.back() == "--include-dir");
    if (!isValue && a.size() > 2 && a.starts_with("-I")) {
      out.emplace_back("-I");
      out.emplace_back(a.substr(2));
    } else {
      out.emplace_back(a);
    }
  }
  return out;
}

int runBuild(std::span<char* const> rawArgs) {
  std::vector<std::string> words = expandShortInclude(rawArgs);
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const std::span<char* const> args(argv.data(), argv.size() - 1);

  static constexpr support::OptionSpec kOptions[] = {
      {"--output", true, "-o", "a LIBRARY"},
      {"--type", true, {}, "a NAME"},
      {"--include-dir", true, "-I", "a DIR"},
      {"--cxxflags", true, {}, "FLAGS"},
      {"--verbose", false, "-v"},
  };
  support::ParsedArgs parsed;
  if (std::string err = support::parseArgs(args, kOptions, parsed); !err.empty()) return usageError(err);
  if (parsed.dashDash) return usageError("unexpected '--'");
  if (parsed.operands.empty()) return usageError("missing the COMPOSITION or HEADER to build");
  if (parsed.operands.size() > 1)
    return usageError("give one COMPOSITION or HEADER (a composition with spaces needs quotes)");

  BuildRequest request;
  bool verbose = false, haveType = false;
  for (const support::GivenOption& o : parsed.options) {
    if (o.name == "--output") {
      if (o.value.empty()) return usageError("--output needs a LIBRARY");
      request.output = o.value;
    } else if (o.name == "--type") {
      if (o.value.empty()) return usageError("--type needs a NAME");
      request.type = o.value;
      haveType = true;
    } else if (o.name == "--include-dir") {
      if (o.value.empty()) return usageError("-I needs a DIR");
      request.includeDirs.push_back(o.value);
    } else if (o.name == "--cxxflags") {
      request.cxxFlags += (request.cxxFlags.empty() ? "" : " ") + o.value;
    } else if (o.name == "--verbose") {
      verbose = true;
    }
  }
  if (request.output.empty()) return usageError("missing -o LIBRARY");
  const std::string& what = parsed.operands[0];
  if (looksLikeHeader(what)) {
    request.header = what;
  } else {
    if (haveType) return usageError("--type names the heap of a HEADER; '" + what + "' is a composition");
    request.composition = what;
  }

  const BuildResult r = buildLibrary(request);
  if (verbose && !r.command.empty()) {
    std::fprintf(stderr, "strata build: strata-build.cpp:\n%s", r.glue.c_str());
    std::fprintf(stderr, "strata build: %s\n", support::shellLine(r.command).c_str());
    std::fputs(r.fullLog.c_str(), stderr);
  }
  const std::string logPath = request.output + ".log";
  std::error_code ec;
  switch (r.status) {
    case BuildStatus::BadRequest:
      std::fprintf(stderr, "strata build: %s\n", r.error.c_str());
      return 2;
    case BuildStatus::CompileFailed: {
      std::fprintf(stderr, "strata build: %s does not compile (%s):\n", r.heapType.c_str(), r.error.c_str());
      if (!verbose)
        std::fputs(r.firstError.empty() ? r.fullLog.c_str() : r.firstError.c_str(), stderr);
      if (!request.header.empty() && missingType(r))
        std::fprintf(stderr, "strata build: %s must define the heap type %s at global scope (using %s = ...;), "
                             "or name its type with --type\n",
                     request.header.c_str(), request.type.c_str(), request.type.c_str());
      std::ofstream log(logPath, std::ios::binary);
      log << r.fullLog;
      if (log.flush())
        std::fprintf(stderr, "strata build: the compiler's whole output is in %s\n", logPath.c_str());
      else if (!verbose)
        std::fputs("strata build: run with --verbose to see all the compiler printed\n", stderr);
      return 1;
    }
    case BuildStatus::ProbeFailed:
      std::fprintf(stderr, "strata build: built %s, but it fails the check: %s\n",
                   request.output.c_str(), r.probe.reason.c_str());
      return 1;
    case BuildStatus::Built:
      break;
  }
  fs::remove(logPath, ec);  // an earlier failed build's log is stale now
  std::printf("built %s (%s) in %.1f s; use it: strata run --allocator %s -- ./app, or LD_PRELOAD=%s ./app\n",
              request.output.c_str(), r.heapType.c_str(), r.seconds, asSpecPath(request.output).c_str(),
              fs::absolute(request.output).lexically_normal().c_str());
  if (!r.fullLog.empty() && !verbose) std::fputs(r.fullLog.c_str(), stderr);  // the compiler's warnings
  return 0;
}

}  // namespace

const Command kBuildCommand{"build", "make a heap composition a drop-in malloc library", kHelp,
                            &runBuild};

}  // namespace strata::cli
