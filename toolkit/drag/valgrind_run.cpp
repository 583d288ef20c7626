// Running a command under Valgrind with the drag tool (valgrind_run.hpp).
#include "drag/valgrind_run.hpp"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "support/process.hpp"

namespace strata::drag {
namespace {

// Valgrind's tool directory always holds memcheck.
bool isToolDir(const std::string& dir) {
  return !dir.empty() && ::access((dir + "/memcheck-amd64-linux").c_str(), X_OK) == 0;
}

// The directory part of path ("/usr/bin/valgrind" -> "/usr/bin").
std::string dirName(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string realPath(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) != nullptr ? std::string(buf) : path;
}

// Every entry of dir (but . and ..); empty when it cannot be read.
std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return names;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(d);
  return names;
}

std::string systemError(const std::string& what) { return what + ": " + std::strerror(errno); }

// The tool expands its output option (--drag-out) as Valgrind does --log-file (%p, %q{VAR});
// a '%' of the caller's file names is doubled to stay one.
std::string escapePercent(const std::string& path) {
  std::string out;
  for (const char c : path) {
    out += c;
    if (c == '%') out += '%';
  }
  return out;
}

}  // namespace

std::optional<Valgrind> findValgrind(std::string& why) {
  std::string notFound;
  const std::string program = support::resolveCommand("valgrind", notFound);
  if (program.empty()) {
    why = "valgrind is not installed (Debian package: valgrind)";
    return std::nullopt;
  }
  std::vector<std::string> candidates;
  if (const char* lib = std::getenv("VALGRIND_LIB"); lib != nullptr) candidates.push_back(lib);
  const std::string prefix = dirName(dirName(realPath(program)));
  candidates.push_back(prefix + "/libexec/valgrind");
  candidates.push_back(prefix + "/lib/valgrind");
  for (const char* dir : {"/usr/libexec/valgrind", "/usr/lib/valgrind",
                          "/usr/lib/x86_64-linux-gnu/valgrind", "/usr/local/libexec/valgrind",
                          "/usr/local/lib/valgrind"})
    candidates.push_back(dir);
  for (const std::string& dir : candidates)
    if (isToolDir(dir)) return Valgrind{program, dir};
  why = "valgrind's tool directory (holding memcheck-amd64-linux) was not found beside " +
        program + " (Debian package: valgrind)";
  return std::nullopt;
}

std::optional<DragRun> DragRun::prepare(const std::string& toolPath, std::string& why) {
  std::optional<Valgrind> valgrind = findValgrind(why);
  if (!valgrind) return std::nullopt;
  if (::access(toolPath.c_str(), X_OK) != 0) {
    why = "the drag tool was not built (" + toolPath +
          " is missing: build the CMake target strata_drag_tool, which needs Valgrind's tool "
          "headers and libraries, Debian package: valgrind)";
    return std::nullopt;
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp") +
                        "/strata-drag-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    why = systemError("cannot make a temporary directory " + pattern);
    return std::nullopt;
  }
  DragRun run(std::move(*valgrind), pattern);
  const std::string absoluteTool = realPath(toolPath);
  for (const std::string& name : entries(run.valgrind_.toolDir)) {
    if (name == kToolFile) continue;
    const std::string target = run.valgrind_.toolDir + "/" + name;
    if (::symlink(target.c_str(), (run.libDir_ + "/" + name).c_str()) != 0) {
      why = systemError("cannot link " + target + " into " + run.libDir_);
      return std::nullopt;
    }
  }
  if (::symlink(absoluteTool.c_str(), (run.libDir_ + "/" + kToolFile).c_str()) != 0) {
    why = systemError("cannot link " + absoluteTool + " into " + run.libDir_);
    return std::nullopt;
  }
  return run;
}

DragRun::DragRun(DragRun&& other) noexcept
    : valgrind_(std::move(other.valgrind_)), libDir_(std::exchange(other.libDir_, {})) {}

DragRun& DragRun::operator=(DragRun&& other) noexcept {
  if (this != &other) {
    removeLibDir();
    valgrind_ = std::move(other.valgrind_);
    libDir_ = std::exchange(other.libDir_, {});
  }
  return *this;
}

DragRun::~DragRun() { removeLibDir(); }

void DragRun::removeLibDir() noexcept {
  if (libDir_.empty()) return;
  try {
    for (const std::string& name : entries(libDir_)) ::unlink((libDir_ + "/" + name).c_str());
  } catch (...) {
    // Out of memory listing it: the directory stays behind, which is harmless.
  }
  ::rmdir(libDir_.c_str());
  libDir_.clear();
}

std::vector<std::string> DragRun::argv(const std::string& outFile,
                                       const std::vector<std::string>& command,
                                       const std::vector<std::string>& valgrindOptions) const {
  std::vector<std::string> args{valgrind_.program, std::string("--tool=") + kToolName,
                                STRATA_DRAG_OUT_OPTION "=" + escapePercent(outFile), "-q"};
  args.insert(args.end(), valgrindOptions.begin(), valgrindOptions.end());
  args.push_back("--");
  args.insert(args.end(), command.begin(), command.end());
  return args;
}

std::vector<std::string> DragRun::argvEveryProcess(
    const std::string& dir, const std::vector<std::string>& command,
    const std::vector<std::string>& valgrindOptions) const {
  std::vector<std::string> args{valgrind_.program, std::string("--tool=") + kToolName,
                                STRATA_DRAG_OUT_OPTION "=" + escapePercent(dir + "/last-use.") +
                                    "%p.bin",
                                "-q", "--trace-children=yes",
                                "--log-file=" + escapePercent(dir + "/valgrind.") + "%p.log"};
  args.insert(args.end(), valgrindOptions.begin(), valgrindOptions.end());
  args.push_back("--");
  args.insert(args.end(), command.begin(), command.end());
  return args;
}

std::string DragRun::lastUseFile(const std::string& dir, long pid) {
  return dir + "/last-use." + std::to_string(pid) + ".bin";
}

std::vector<std::string> DragRun::environment() const { return {"VALGRIND_LIB=" + libDir_}; }

}  // namespace strata::drag
