// Building a drop-in malloc library from a heap composition, as `strata build` does and as
// any command that wants to try compositions can: a glue source (strata/strata.hpp, the
// user's header if any, `using` the heap, STRATA_DEFINE_MALLOC over strata::MallocShim) is
// written to a private temporary directory, compiled and linked by the system C++ compiler
// the way Strata's own libraries are (layers/malloc/CMakeLists.txt: hidden visibility,
// -fno-builtin, no exceptions or RTTI, linked without libstdc++, -z now, --no-undefined),
// checked by strata-probe (it preloads and takes over malloc and free), and only then moved
// to the output path. Nothing is printed: the caller reports the result.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "registry/allocator_spec.hpp"

namespace strata::build {

// What to build. Exactly one of `composition` and `header` is set.
struct BuildRequest {
  std::string composition;  // a heap type: "strata::LockedHeap<strata::SpinLock, ...>"
  std::string header;       // or a header (any path) that defines the heap type ...
  std::string type = "Heap";  // ... named so, looked up from the global scope ("::" + type)
  std::string output;       // the library to write ("libmine.so")
  std::vector<std::string> includeDirs;  // -I for the user's headers, searched first
  std::string cxxFlags;     // extra compiler flags, split at spaces, after ours
};

// How a build ended.
enum class BuildStatus {
  Built,          // the library is at `output`, preloads and takes over malloc
  BadRequest,     // no such header, no compiler, no Strata headers, an output it cannot write
  CompileFailed,  // the compiler (or linker) rejected it; `output` is untouched
  ProbeFailed,    // the library is at `output` but does not work preloaded (`probe.reason`)
};

struct BuildResult {
  BuildStatus status = BuildStatus::BadRequest;
  bool ok() const { return status == BuildStatus::Built; }
  std::string heapType;    // the heap as the glue names it (the composition, or the type)
  std::string error;       // BadRequest: why, one sentence; CompileFailed: a one-line summary
  std::string firstError;  // CompileFailed: the compiler's first error with its notes
  std::string fullLog;     // everything the compiler printed (stdout and stderr)
  std::string glue;        // the glue source that was compiled
  std::vector<std::string> command;  // the compiler's command line
  std::string includeDir;            // the Strata headers compiled against
  registry::ProbeResult probe;       // after linking (ProbeFailed: probe.reason)
  double seconds = 0;                // compile and link, wall time
};

// True when a `strata build` argument names a header rather than a composition: an existing
// file, or a name ending in .h, .hpp, .hh or .hxx.
bool looksLikeHeader(std::string_view arg);

// The directory holding strata/shim/malloc_shim.hpp: $STRATA_INCLUDE_DIR, else
// <directory of the running executable>/../include (an install), else the source tree's
// include/ this executable was built from. Empty when none has it; `lookedIn` then lists
// where it looked.
std::string findStrataIncludeDir(std::string& lookedIn);

// The compiler to run: $CXX split at spaces ("ccache g++" works), else {"c++"}.
std::vector<std::string> compilerCommand();

// The glue source for a request (the heap is `using StrataBuildHeap = ...;`).
std::string glueSource(const BuildRequest& request);

// The first diagnostic in a compiler's output: the first line holding "error:", the context
// lines just before it (In instantiation of, In file included from), and the notes that
// follow it (constraints not satisfied, the required expression ... is invalid, required
// for the satisfaction of ...) up to the next error or about 25 lines. For a link failure
// (collect2 / ld), the linker's lines instead (undefined reference to ...). Empty when the
// output holds no error.
std::string firstCompilerError(const std::string& log);

// Builds, checks and installs the library. Never throws. Each call compiles in its own
// temporary directory and probes the library there, so building different compositions to
// the same output path in one process is checked afresh each time.
BuildResult buildLibrary(const BuildRequest& request);

// What `strata build` says about a result (build_outcome.cpp), so another command building
// compositions words them alike:
// True when the compiler's first error says the header's heap type is not there.
bool missingHeapType(const BuildResult& result);
// What `strata build` says first about a failed result, as one line: the request's error, that
// the heap does not compile and why, or that the library fails the check. Empty when built.
std::string failureLine(const BuildRequest& request, const BuildResult& result);
// The library as a spec `strata run` takes: a bare file name gets "./" so it reads as a path.
std::string runSpecPath(const std::string& output);
// A failed compile's whole output is kept in LIBRARY.log; a successful build removes an earlier
// failure's stale log. Returns the log's path when one was written, else empty.
std::string keepBuildLog(const BuildRequest& request, const BuildResult& result);

}  // namespace strata::build
