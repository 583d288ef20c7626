// Running a child process and measuring it (process.hpp).
#include "process.hpp"
#include "helpers.hpp"
#include "proc.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

extern char** environ;

namespace strata::support {
namespace {

double now() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

double seconds(const timeval& t) {
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
}

// True when the NAME=VALUE entry `var` sets `name`.
bool sets(std::string_view var, std::string_view name) {
  return var.size() > name.size() && var.starts_with(name) && var[name.size()] == '=';
}

// The child's environment from the spec (process.hpp).
std::vector<std::string> buildEnvironment(const ChildSpec& spec) {
  std::vector<std::string> env;
  if (spec.env) {
    env = *spec.env;
  } else {
    for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  }
  const auto drop = [&env](std::string_view name) {
    std::erase_if(env, [name](const std::string& v) { return sets(v, name); });
  };
  for (const std::string& name : spec.unset) drop(name);
  for (const std::string& s : spec.set) drop(std::string_view(s).substr(0, s.find('=')));
  env.insert(env.end(), spec.set.begin(), spec.set.end());
  if (!spec.preload.empty()) {
    std::string preload = spec.preload;
    for (const std::string& v : env)
      if (sets(v, "LD_PRELOAD") && v.size() > 11) preload += ":" + v.substr(11);
    drop("LD_PRELOAD");
    env.push_back("LD_PRELOAD=" + preload);
  }
  return env;
}

// Whether `path` is a regular file this process may execute; sets `why` when not.
bool executable(const std::string& path, std::string& why) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    why = errno == ENOENT || errno == ENOTDIR ? "command not found" : std::strerror(errno);
    return false;
  }
  if (S_ISDIR(st.st_mode)) {
    why = "is a directory";
    return false;
  }
  if (::access(path.c_str(), X_OK) != 0) {
    why = std::strerror(errno);
    return false;
  }
  return true;
}

// Points fd `target` at `path` opened with `flags`; false when it cannot be opened.
bool redirect(int target, const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) return false;
  if (fd != target) {
    ::dup2(fd, target);
    ::close(fd);
  }
  return true;
}

}  // namespace

int ProcessResult::shellStatus() const {
  if (!started) return startErrno == ENOENT || startErrno == ENOTDIR ? 127 : 126;
  if (signal != 0) return 128 + signal;
  return exitCode;
}

std::string signalName(int signal) {
  const char* abbrev = ::sigabbrev_np(signal);
  return abbrev != nullptr ? "SIG" + std::string(abbrev) : std::to_string(signal);
}

std::string describeStatus(const ProcessResult& r) {
  if (!r.started) {
    if (r.startErrno == ENOENT || r.startErrno == ENOTDIR) return "not found";
    return std::string("cannot execute: ") + std::strerror(r.startErrno);
  }
  if (r.signal != 0) return "signal " + std::to_string(r.signal) + " (" + signalName(r.signal) + ")";
  return "exit " + std::to_string(r.exitCode);
}

std::string resolveCommand(const std::string& command, std::string& why) {
  if (command.empty()) {
    why = "the command is empty";
    return {};
  }
  if (command.find('/') != std::string::npos) return executable(command, why) ? command : "";
  const char* path = std::getenv("PATH");
  const std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  std::string firstWhy;
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t colon = std::min(dirs.find(':', start), dirs.size());
    std::string dir = dirs.substr(start, colon - start);
    start = colon + 1;
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + command;
    std::string w;
    if (executable(candidate, w)) return candidate;
    if (firstWhy.empty() && w != "command not found") firstWhy = w;
  }
  why = firstWhy.empty() ? "command not found" : firstWhy;
  return {};
}

std::string shellLine(const std::vector<std::string>& args) {
  std::string line;
  for (const std::string& a : args) {
    if (!line.empty()) line += ' ';
    if (!a.empty() && a.find_first_of(" \t\n'\"\\$`;&|<>()*?[]{}~#!") == std::string::npos) {
      line += a;
      continue;
    }
    line += '\'';
    for (const char c : a) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

std::string measuringLauncher() {
  return helperPresent(HelperId::Exec) ? helperPath(HelperId::Exec) : std::string();
}

namespace {

// Parses strata-exec's report line into r; false when malformed.
bool parseLauncherReport(const std::string& line, ProcessResult& r) {
  int started = 0, err = 0, code = -1, sig = 0;
  long maxRssKib = 0;
  long long utime = 0, stime = 0;
  if (std::sscanf(line.c_str(), "%d %d %d %d %ld %lld %lld", &started, &err, &code, &sig,
                  &maxRssKib, &utime, &stime) != 7)
    return false;
  r.started = started != 0;
  r.startErrno = r.started ? 0 : err;
  if (sig != 0) r.signal = sig;
  else r.exitCode = code;
  r.userSeconds = static_cast<double>(utime) * 1e-6;
  r.systemSeconds = static_cast<double>(stime) * 1e-6;
  r.maxRssBytes = static_cast<std::uint64_t>(maxRssKib) * 1024;
  r.ownPeakRss = true;
  return true;
}

}  // namespace

ProcessResult runChild(const ChildSpec& spec) {
  ProcessResult r;
  if (spec.argv.empty()) {
    r.startErrno = ENOENT;
    return r;
  }
  std::string why;
  const std::string program = resolveCommand(spec.argv[0], why);
  if (program.empty()) {
    r.startErrno = why == "command not found" ? ENOENT : EACCES;
    return r;
  }
  std::vector<std::string> env = buildEnvironment(spec);
  // With a launcher: strata-exec REPORT-FD PROGRAM ARGV..., the report through a pipe.
  const std::string launcher = spec.ownPeakRss ? measuringLauncher() : std::string();
  int reportPipe[2] = {-1, -1};
  if (!launcher.empty() && ::pipe2(reportPipe, O_CLOEXEC) != 0) {
    r.startErrno = errno;
    return r;
  }
  std::vector<std::string> launchArgs;
  if (!launcher.empty())
    launchArgs = {launcher, std::to_string(reportPipe[1]), program};
  std::vector<char*> argv, envp;
  for (const std::string& a : launchArgs) argv.push_back(const_cast<char*>(a.c_str()));
  for (std::size_t i = 0; i < spec.argv.size(); ++i)
    argv.push_back(const_cast<char*>(spec.argv[i].c_str()));
  argv.push_back(nullptr);
  const std::string& image = launcher.empty() ? program : launcher;
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  // exec's errno comes back through a close-on-exec pipe; stdout through another when captured.
  int errPipe[2], outPipe[2] = {-1, -1};
  if (::pipe2(errPipe, O_CLOEXEC) != 0) {
    r.startErrno = errno;
    return r;
  }
  const bool pipeOut = spec.captureStdout && spec.stdoutPath.empty();
  if (pipeOut && ::pipe2(outPipe, O_CLOEXEC) != 0) {
    r.startErrno = errno;
    ::close(errPipe[0]);
    ::close(errPipe[1]);
    return r;
  }
  std::fflush(nullptr);
  const double start = now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    r.startErrno = errno;
    for (const int fd : {errPipe[0], errPipe[1], outPipe[0], outPipe[1], reportPipe[0], reportPipe[1]})
      if (fd >= 0) ::close(fd);
    return r;
  }
  if (pid == 0) {
    int err = 0;
    if (!spec.stdinPath.empty() && !redirect(STDIN_FILENO, spec.stdinPath, O_RDONLY)) err = errno;
    if (err == 0 && !spec.stdoutPath.empty() &&
        !redirect(STDOUT_FILENO, spec.stdoutPath, O_WRONLY | O_CREAT | O_TRUNC))
      err = errno;
    if (err == 0 && pipeOut) ::dup2(outPipe[1], STDOUT_FILENO);
    if (err == 0 && !spec.stderrPath.empty() &&
        !redirect(STDERR_FILENO, spec.stderrPath, O_WRONLY | O_CREAT | O_TRUNC))
      err = errno;
    if (err == 0 && spec.quiet) {
      if (spec.stdoutPath.empty() && !pipeOut) redirect(STDOUT_FILENO, "/dev/null", O_WRONLY);
      if (spec.stderrPath.empty()) redirect(STDERR_FILENO, "/dev/null", O_WRONLY);
    }
    if (err == 0 && reportPipe[1] >= 0) ::fcntl(reportPipe[1], F_SETFD, 0);  // strata-exec's
    if (err == 0) {
      ::execve(image.c_str(), argv.data(), envp.data());
      err = errno;
    }
    const ssize_t ignored = ::write(errPipe[1], &err, sizeof err);
    (void)ignored;
    ::_exit(127);
  }
  ::close(errPipe[1]);
  if (reportPipe[1] >= 0) ::close(reportPipe[1]);
  if (pipeOut) {
    ::close(outPipe[1]);
    char buf[65536];
    for (ssize_t got; (got = ::read(outPipe[0], buf, sizeof buf)) != 0;) {
      if (got < 0) {
        if (errno == EINTR) continue;
        break;
      }
      r.out.append(buf, static_cast<std::size_t>(got));
    }
    ::close(outPipe[0]);
  }
  int execErr = 0;
  ssize_t got;
  while ((got = ::read(errPipe[0], &execErr, sizeof execErr)) < 0 && errno == EINTR) {
  }
  ::close(errPipe[0]);
  int status = 0;
  struct rusage usage {};
  while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  r.wallSeconds = now() - start;
  std::string report;
  if (reportPipe[0] >= 0) {
    char buf[256];
    for (ssize_t n; (n = ::read(reportPipe[0], buf, sizeof buf)) != 0;) {
      if (n < 0) {
        if (errno == EINTR) continue;
        break;
      }
      report.append(buf, static_cast<std::size_t>(n));
    }
    ::close(reportPipe[0]);
  }
  if (got == static_cast<ssize_t>(sizeof execErr)) {
    r.startErrno = execErr;
    return r;
  }
  if (!launcher.empty()) {
    // strata-exec reports the command; without a report it failed itself (exit 125).
    if (!parseLauncherReport(report, r)) {
      r.started = false;
      r.startErrno = EIO;
    }
    return r;
  }
  r.started = true;
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  else r.exitCode = WEXITSTATUS(status);
  r.userSeconds = seconds(usage.ru_utime);
  r.systemSeconds = seconds(usage.ru_stime);
  r.maxRssBytes = static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // kilobytes on Linux
  return r;
}

}  // namespace strata::support
