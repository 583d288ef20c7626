// What the end-to-end tests of the `strata` command share: a scratch directory, reading a
// file whole, and running a program with its output captured. Used by tests/cli, tests/record,
// tests/replay, tests/tracetools and tests/compare.
#pragma once
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace strata::test {

// The whole content of a file (empty when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A scratch directory under the system's temporary directory, removed with its files at the
// end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "strata_test.XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  // The path of `name` in the directory, as a string.
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  // Creates a file (and its parent directories) holding `bytes`; returns its path.
  template <class Bytes>
  std::filesystem::path write(const std::string& name, const Bytes& bytes) const {
    const std::filesystem::path p = path_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return p;
  }

 private:
  std::filesystem::path path_;
};

// What one run of a program gave: its raw wait status and what it wrote.
struct RunResult {
  int status = -1;  // from waitpid
  std::string out, err;
  long maxRssKiB = 0;  // the child's peak resident size (getrusage's ru_maxrss)
  int exitCode() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
};

// An environment change for the child: set NAME to the value, or unset it (nullopt).
using EnvChanges = std::vector<std::pair<std::string, std::optional<std::string>>>;

// Runs `exe` with `args` and the environment changes `env`, stdout and stderr captured
// through files (so neither pipe can fill up and block the child). Exit status 98: exec
// failed; 99: the capture files could not be opened.
inline RunResult runProgram(const std::string& exe, const std::vector<std::string>& args,
                            const EnvChanges& env = {}) {
  TempDir io;
  const std::string outPath = io / "out", errPath = io / "err";
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    for (const auto& [name, value] : env) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
    const int out = ::open(outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0) ::_exit(99);
    ::dup2(out, 1);
    ::dup2(err, 2);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(exe.c_str()));
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(exe.c_str(), argv.data());
    ::_exit(98);
  }
  RunResult r;
  if (pid < 0) return r;
  struct rusage usage {};
  ::wait4(pid, &r.status, 0, &usage);
  r.maxRssKiB = usage.ru_maxrss;
  r.out = slurp(outPath);
  r.err = slurp(errPath);
  return r;
}

}  // namespace strata::test
