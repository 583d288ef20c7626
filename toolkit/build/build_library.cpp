// Building a drop-in malloc library from a heap composition (build_library.hpp).
#include "build/build_library.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "support/error.hpp"
#include "support/files.hpp"
#include "support/proc.hpp"
#include "support/process.hpp"

namespace strata::build {
namespace {

namespace fs = std::filesystem;

// The header whose presence marks a directory of Strata headers.
constexpr const char* kMarker = "strata/shim/malloc_shim.hpp";
// The glue's file name, as diagnostics show it.
constexpr const char* kGlueName = "strata-build.cpp";
// A diagnostic shown in full up to this many lines.
constexpr std::size_t kMaxErrorLines = 25;

bool hasMarker(const std::string& dir) {
  std::error_code ec;
  return !dir.empty() && fs::is_regular_file(fs::path(dir) / kMarker, ec);
}

bool endsWith(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

std::vector<std::string> splitWords(std::string_view s) {
  std::vector<std::string> words;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')) ++i;
    const std::size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t' && s[i] != '\n') ++i;
    if (i > start) words.emplace_back(s.substr(start, i - start));
  }
  return words;
}

std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Every occurrence of `from` in `s` replaced by `to`.
std::string replaceAll(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// A line that sets the scene for the diagnostic after it rather than being one.
bool isContextLine(const std::string& line) {
  return contains(line, "In file included from") || line.starts_with("                 from ") ||
         contains(line, ": In instantiation of") || contains(line, ": In substitution of") ||
         contains(line, ": In function") || contains(line, ": In member function") ||
         contains(line, ": In static member function") || contains(line, ": In constructor") ||
         contains(line, ": In destructor") || contains(line, ": At global scope") ||
         contains(line, "required from") || contains(line, ": In lambda function");
}

bool isLinkFailure(const std::string& line) {
  return contains(line, "ld returned") || contains(line, "linker command failed");
}

bool isLinkerLine(const std::string& line) {
  return contains(line, "ld: ") || contains(line, "ld.lld: ") || contains(line, "ld.gold: ") ||
         contains(line, "undefined reference") || contains(line, "multiple definition") ||
         contains(line, "undefined symbol");
}

// A private directory under $TMPDIR (or /tmp), removed with its files when this goes.
class ScratchDir {
 public:
  ScratchDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp") + "/strata-build-XXXXXX";
    if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Moves the built library to `to`: a rename, or across file systems a copy beside `to`
// renamed over it, so a program that has the old library mapped keeps its copy intact.
std::string moveInto(const std::string& from, const std::string& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  if (!ec) return {};
  if (ec != std::errc::cross_device_link) return "cannot write " + to + ": " + ec.message();
  const std::string staged = to + ".strata-build-tmp";
  fs::copy_file(from, staged, fs::copy_options::overwrite_existing, ec);
  if (!ec) fs::rename(staged, to, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(staged, ignored);
    return "cannot write " + to + ": " + ec.message();
  }
  return {};
}

// "the heap type" as messages name it: the composition, or the header's type.
std::string heapTypeOf(const BuildRequest& r) {
  if (!r.header.empty()) return r.type.starts_with("::") ? r.type : "::" + r.type;
  return r.composition;
}

}  // namespace

bool looksLikeHeader(std::string_view arg) {
  std::error_code ec;
  if (fs::is_regular_file(fs::path(std::string(arg)), ec)) return true;
  for (std::string_view ext : {".h", ".hpp", ".hh", ".hxx"})
    if (endsWith(arg, ext)) return true;
  return false;
}

std::string findStrataIncludeDir(std::string& lookedIn) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("STRATA_INCLUDE_DIR"); env != nullptr && env[0] != '\0')
    candidates.emplace_back(env);
  if (const std::string self = support::selfDirectory(); !self.empty())
    candidates.push_back((fs::path(self).parent_path() / "include").lexically_normal().string());
#ifdef STRATA_SOURCE_INCLUDE_DIR
  candidates.emplace_back(STRATA_SOURCE_INCLUDE_DIR);
#endif
  lookedIn.clear();
  for (const std::string& dir : candidates) {
    if (hasMarker(dir)) return dir;
    lookedIn += (lookedIn.empty() ? "" : ", ") + dir;
  }
  return {};
}

std::vector<std::string> compilerCommand() {
  if (const char* cxx = std::getenv("CXX"); cxx != nullptr) {
    std::vector<std::string> words = splitWords(cxx);
    if (!words.empty()) return words;
  }
  return {"c++"};
}

std::string glueSource(const BuildRequest& request) {
  std::string s =
      "// Written by `strata build`: a drop-in malloc library over one heap composition.\n"
      "#include \"strata/strata.hpp\"\n";
  if (!request.header.empty())
    s += "#include \"" + fs::absolute(request.header).lexically_normal().string() + "\"\n";
  s += "\nusing StrataBuildHeap = " + heapTypeOf(request) +
       ";\n"
       "using StrataBuildShim = strata::MallocShim<StrataBuildHeap>;\n"
       "\n"
       "STRATA_DEFINE_MALLOC(StrataBuildShim);\n";
  return s;
}

std::string firstCompilerError(const std::string& log) {
  const std::vector<std::string> lines = splitLines(log);
  std::size_t first = 0;
  while (first < lines.size() && !contains(lines[first], "error:")) ++first;
  if (first == lines.size()) return {};
  std::string out;
  if (isLinkFailure(lines[first])) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < first && kept < kMaxErrorLines; ++i)
      if (isLinkerLine(lines[i])) {
        out += lines[i] + "\n";
        ++kept;
      }
    return out + lines[first] + "\n";
  }
  // The context just before the error: which instantiation, which include.
  std::size_t begin = first;
  while (begin > 0 && first - begin < 10 && isContextLine(lines[begin - 1])) --begin;
  std::size_t end = first + 1;
  while (end < lines.size() && end - first < kMaxErrorLines && !contains(lines[end], "error:")) ++end;
  // Context lines just before the next error belong to it.
  if (end < lines.size() && contains(lines[end], "error:"))
    while (end > first + 1 && isContextLine(lines[end - 1])) --end;
  for (std::size_t i = begin; i < end; ++i) out += lines[i] + "\n";
  return out;
}

namespace {

// Why a request cannot be built before anything is compiled (no output, no such header, an
// output directory that cannot be written), or empty.
std::string requestProblem(const BuildRequest& request) {
  if (request.output.empty()) return "no output library named";
  std::error_code ec;
  if (!request.header.empty() && !fs::is_regular_file(request.header, ec))
    return "no such header: " + request.header;
  if (request.header.empty() && request.composition.find_first_not_of(" \t\n") == std::string::npos)
    return "empty heap composition";
  const fs::path output = fs::absolute(request.output).lexically_normal();
  if (fs::is_directory(output, ec)) return "cannot write " + request.output + ": it is a directory";
  if (!fs::is_directory(output.parent_path(), ec))
    return "cannot write " + request.output + ": no directory " + output.parent_path().string();
  if (::access(output.parent_path().c_str(), W_OK) != 0)
    return "cannot write " + request.output + ": " + std::strerror(errno);
  return {};
}

// The compiler's command line: as layers/malloc/CMakeLists.txt builds Strata's own
// libraries, in one compile-and-link.
std::vector<std::string> compileCommand(const BuildRequest& request, const std::string& includeDir,
                                        const std::string& gluePath, const std::string& library,
                                        const fs::path& output) {
  std::vector<std::string> command = compilerCommand();
  for (const char* flag :
       {"-std=c++20", "-O2", "-DNDEBUG", "-fPIC", "-shared", "-fvisibility=hidden",
        "-fvisibility-inlines-hidden", "-fno-builtin", "-fno-exceptions", "-fno-rtti"})
    command.emplace_back(flag);
  for (const std::string& dir : request.includeDirs) command.push_back("-I" + dir);
  command.push_back("-I" + includeDir);
  for (std::string& flag : splitWords(request.cxxFlags)) command.push_back(std::move(flag));
  command.insert(command.end(), {gluePath, "-o", library, "-Wl,-soname," + output.filename().string(),
                                 "-Wl,-z,now", "-Wl,--no-undefined",
                                 // Linked as C: the C library and libgcc, no libstdc++
                                 // (strata/shim/cxx_runtime.hpp says why).
                                 "-nodefaultlibs", "-Wl,--as-needed", "-lc", "-ldl", "-lgcc",
                                 "-lgcc_s", "-Wl,--no-as-needed"});
  return command;
}

}  // namespace

BuildResult buildLibrary(const BuildRequest& request) {
  BuildResult r;
  r.heapType = heapTypeOf(request);
  r.error = requestProblem(request);
  if (!r.error.empty()) return r;
  std::error_code ec;
  const fs::path output = fs::absolute(request.output).lexically_normal();
  std::string lookedIn;
  r.includeDir = findStrataIncludeDir(lookedIn);
  if (r.includeDir.empty()) {
    r.error = std::string("cannot find Strata's headers (") + kMarker + ") in " + lookedIn +
              " (set STRATA_INCLUDE_DIR to the directory that holds strata/)";
    return r;
  }
  ScratchDir scratch;
  if (scratch.path().empty()) {
    r.error = std::string("cannot create a temporary directory: ") + std::strerror(errno);
    return r;
  }
  r.glue = glueSource(request);
  const std::string gluePath = scratch.path() + "/" + kGlueName;
  // Built and probed under a plain name (LD_PRELOAD cannot carry a space or a ':').
  const std::string library = scratch.path() + "/libstrata-build.so";
  const std::string logPath = scratch.path() + "/compiler.log";
  try {
    support::writeFileAtomically(gluePath, r.glue);
  } catch (const support::Error& e) {
    r.error = e.what();
    return r;
  }

  r.command = compileCommand(request, r.includeDir, gluePath, library, output);

  support::ChildSpec child;
  child.argv = r.command;
  child.captureStdout = true;
  child.stderrPath = logPath;
  const auto start = std::chrono::steady_clock::now();
  const support::ProcessResult run = support::runChild(child);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!run.started) {
    const std::string tried = r.command[0];
    r.error = "cannot run the C++ compiler '" + tried + "' (" +
              (run.startErrno == ENOENT ? std::string("not found") : std::strerror(run.startErrno)) +
              "): set CXX to a C++20 compiler, or install one (Debian: apt-get install g++)";
    return r;
  }
  // The scratch directory is nobody's business: diagnostics name the glue by its file name.
  r.fullLog = replaceAll(run.out + support::readFile(logPath), scratch.path() + "/", "");
  if (!run.succeeded() || !fs::is_regular_file(library, ec)) {
    r.status = BuildStatus::CompileFailed;
    r.firstError = firstCompilerError(r.fullLog);
    r.error = r.command[0] + " " + support::describeStatus(run);
    return r;
  }

  // Probed where it was built: a fresh path, so no earlier probe of `output` is reused.
  try {
    const registry::AllocatorSpec spec = registry::parseSpec(library);
    r.probe = registry::probe(registry::resolve(spec, registry::defaultSearchDirs()));
    r.probe.reason = replaceAll(r.probe.reason, library, output.string());
  } catch (const support::Error& e) {
    r.status = BuildStatus::ProbeFailed;
    r.probe.reason = e.what();
  }
  if (const std::string err = moveInto(library, output.string()); !err.empty()) {
    r.status = BuildStatus::BadRequest;
    r.error = err;
    return r;
  }
  r.status = r.probe.ok ? BuildStatus::Built : BuildStatus::ProbeFailed;
  return r;
}

}  // namespace strata::build
