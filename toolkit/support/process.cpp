// Running a child process and measuring it (process.hpp).
#include "support/process.hpp"
#include "support/helpers.hpp"
#include "support/proc.hpp"
#include "support/process_signals.hpp"

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
#include <utility>

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
  if (!spec.pidVariable.empty()) drop(spec.pidVariable);
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

// 0 when `path` is a regular file this process may execute, else why not as an errno
// (EISDIR for a directory).
int executableError(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno;
  if (S_ISDIR(st.st_mode)) return EISDIR;
  return ::access(path.c_str(), X_OK) != 0 ? errno : 0;
}

bool notFound(int err) { return err == ENOENT || err == ENOTDIR; }

// Where `command` runs from (resolveCommand), or empty with `err` set.
std::string findProgram(const std::string& command, int& err) {
  if (command.empty()) {
    err = ENOENT;
    return {};
  }
  if (command.find('/') != std::string::npos) {
    err = executableError(command);
    return err == 0 ? command : "";
  }
  const char* path = std::getenv("PATH");
  const std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  // As execvp: a match that cannot run is skipped, and its reason is the answer when no
  // later match can run.
  int firstErr = 0;
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t colon = std::min(dirs.find(':', start), dirs.size());
    std::string dir = dirs.substr(start, colon - start);
    start = colon + 1;
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + command;
    const int e = executableError(candidate);
    if (e == 0) return candidate;
    if (firstErr == 0 && !notFound(e)) firstErr = e;
  }
  err = firstErr != 0 ? firstErr : ENOENT;
  return {};
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
  if (!started) return notFound(startErrno) ? 127 : 126;
  if (signal != 0) return 128 + signal;
  return exitCode;
}

std::string signalName(int signal) {
  const char* abbrev = ::sigabbrev_np(signal);
  return abbrev != nullptr ? "SIG" + std::string(abbrev) : std::to_string(signal);
}

std::string describeStatus(const ProcessResult& r) {
  if (!r.started) {
    if (notFound(r.startErrno)) return "not found";
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
  int err = 0;
  std::string program = findProgram(command, err);
  if (program.empty())
    why = notFound(err)    ? "command not found"
          : err == EISDIR ? "is a directory"
                          : std::strerror(err);
  return program;
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

// Everything execve needs, built before fork (the child of a process with threads must not
// allocate), in place: the pointers point into the strings.
struct ExecPlan {
  std::string program;            // the command's file
  std::string image;              // what execve runs: the program, or strata-exec
  std::vector<std::string> args;  // strata-exec's own arguments, then the command's argv
  std::vector<std::string> env;
  std::vector<char*> argv, envp;
  std::vector<char*> shellArgv;   // /bin/sh PROGRAM ARGS..., for a file without "#!"
  bool launcher = false;
  char* pidDigits = nullptr;      // where the child writes its pid (ChildSpec::pidVariable)
};

// The pid's digits, null-terminated, into `out` (room for 20 and the null); in the child,
// where nothing may allocate.
void writePid(char* out, long pid) {
  char digits[20];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + pid % 10);
    pid /= 10;
  } while (pid > 0 && n < 20);
  while (n > 0) *out++ = digits[--n];
  *out = '\0';
}

// With a launcher (strata-exec): strata-exec REPORT-FD PROGRAM ARGV..., the report through a
// pipe.
void planExec(ExecPlan& plan, const ChildSpec& spec, const std::string& launcher, int reportFd) {
  plan.launcher = !launcher.empty();
  plan.image = plan.launcher ? launcher : plan.program;
  if (plan.launcher) plan.args = {launcher, std::to_string(reportFd), plan.program};
  const std::size_t command = plan.args.size();
  plan.args.insert(plan.args.end(), spec.argv.begin(), spec.argv.end());
  plan.env = buildEnvironment(spec);
  if (!spec.pidVariable.empty()) plan.env.push_back(spec.pidVariable + "=" + std::string(20, ' '));
  for (std::string& a : plan.args) plan.argv.push_back(a.data());
  plan.argv.push_back(nullptr);
  for (std::string& e : plan.env) plan.envp.push_back(e.data());
  plan.envp.push_back(nullptr);
  if (!spec.pidVariable.empty())
    plan.pidDigits = plan.env.back().data() + spec.pidVariable.size() + 1;
  // As execvp: the shell gets the program's path in place of argv[0].
  plan.shellArgv = {const_cast<char*>("/bin/sh"), plan.program.data()};
  plan.shellArgv.insert(plan.shellArgv.end(), plan.argv.begin() + static_cast<long>(command) + 1,
                        plan.argv.end());
}

// The pipes between this process and the child: exec's errno (close-on-exec, so it reads
// end-of-file once the exec succeeded), stdout when captured, strata-exec's report.
struct Pipes {
  int err[2] = {-1, -1};
  int out[2] = {-1, -1};
  int report[2] = {-1, -1};
  void close() {
    for (int* p : {err, out, report})
      for (int i = 0; i < 2; ++i)
        if (p[i] >= 0) ::close(std::exchange(p[i], -1));
  }
  // Opens those the spec needs; errno on failure (all closed), 0 on success.
  int open(bool captureOut, bool launcher) {
    if (::pipe2(err, O_CLOEXEC) != 0 || (captureOut && ::pipe2(out, O_CLOEXEC) != 0) ||
        (launcher && ::pipe2(report, O_CLOEXEC) != 0)) {
      const int e = errno;
      close();
      return e;
    }
    return 0;
  }
};

// In the child: the redirections, then exec. Returns errno when a redirection fails.
int redirectStdio(const ChildSpec& spec, const Pipes& pipes) {
  const bool pipeOut = pipes.out[1] >= 0;
  if (!spec.stdinPath.empty() && !redirect(STDIN_FILENO, spec.stdinPath, O_RDONLY)) return errno;
  if (!spec.stdoutPath.empty() &&
      !redirect(STDOUT_FILENO, spec.stdoutPath, O_WRONLY | O_CREAT | O_TRUNC))
    return errno;
  if (pipeOut) ::dup2(pipes.out[1], STDOUT_FILENO);
  if (!spec.stderrPath.empty() &&
      !redirect(STDERR_FILENO, spec.stderrPath, O_WRONLY | O_CREAT | O_TRUNC))
    return errno;
  if (spec.quiet) {
    if (spec.stdoutPath.empty() && !pipeOut) redirect(STDOUT_FILENO, "/dev/null", O_WRONLY);
    if (spec.stderrPath.empty()) redirect(STDERR_FILENO, "/dev/null", O_WRONLY);
  }
  return 0;
}

// The child's side of the fork: only async-signal-safe calls. exec's errno goes back through
// the pipe.
[[noreturn]] void execChild(const ChildSpec& spec, const ExecPlan& plan, const Pipes& pipes,
                            const detail::SignalRelay& relay) {
  relay.inChild();
  if (plan.pidDigits != nullptr) writePid(plan.pidDigits, static_cast<long>(::getpid()));
  int err = redirectStdio(spec, pipes);
  if (err == 0) {
    if (pipes.report[1] >= 0) ::fcntl(pipes.report[1], F_SETFD, 0);  // strata-exec's
    ::execve(plan.image.c_str(), plan.argv.data(), plan.envp.data());
    err = errno;
    if (err == ENOEXEC && !plan.launcher)
      ::execve(plan.shellArgv[0], plan.shellArgv.data(), plan.envp.data());
  }
  const ssize_t ignored = ::write(pipes.err[1], &err, sizeof err);
  (void)ignored;
  ::_exit(127);
}

// Everything until end-of-file from fd, which is then closed.
std::string readAll(int fd) {
  std::string text;
  char buf[65536];
  for (ssize_t got; (got = ::read(fd, buf, sizeof buf)) != 0;) {
    if (got < 0) {
      if (errno == EINTR) continue;
      break;
    }
    text.append(buf, static_cast<std::size_t>(got));
  }
  ::close(fd);
  return text;
}

// The exec's errno from the pipe, 0 when the exec succeeded (end-of-file).
int execError(int fd) {
  int execErr = 0;
  ssize_t got;
  while ((got = ::read(fd, &execErr, sizeof execErr)) < 0 && errno == EINTR) {
  }
  ::close(fd);
  return got == static_cast<ssize_t>(sizeof execErr) ? execErr : 0;
}

// How the child ended, from wait4 or from strata-exec's report.
void fillResult(ProcessResult& r, int status, const rusage& usage, const std::string* report) {
  if (report != nullptr) {
    // strata-exec reports the command; without a report it failed itself (exit 125).
    if (!parseLauncherReport(*report, r)) {
      r.started = false;
      r.startErrno = EIO;
    }
    return;
  }
  r.started = true;
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  else r.exitCode = WEXITSTATUS(status);
  r.userSeconds = seconds(usage.ru_utime);
  r.systemSeconds = seconds(usage.ru_stime);
  r.maxRssBytes = static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // kilobytes on Linux
}

}  // namespace

ProcessResult runChild(const ChildSpec& spec) {
  ProcessResult r;
  if (spec.argv.empty()) {
    r.startErrno = ENOENT;
    return r;
  }
  ExecPlan plan;
  plan.program = findProgram(spec.argv[0], r.startErrno);
  if (plan.program.empty()) {
    if (r.startErrno == EISDIR) r.startErrno = EACCES;  // what execve says of a directory
    return r;
  }
  const std::string launcher = spec.ownPeakRss ? measuringLauncher() : std::string();
  const bool pipeOut = spec.captureStdout && spec.stdoutPath.empty();
  Pipes pipes;
  if ((r.startErrno = pipes.open(pipeOut, !launcher.empty())) != 0) return r;
  planExec(plan, spec, launcher, pipes.report[1]);
  detail::SignalRelay relay(spec.relaySignals);
  std::fflush(nullptr);
  const double start = now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    r.startErrno = errno;
    pipes.close();
    return r;
  }
  if (pid == 0) execChild(spec, plan, pipes, relay);
  relay.started(pid);
  ::close(std::exchange(pipes.err[1], -1));
  if (pipes.report[1] >= 0) ::close(std::exchange(pipes.report[1], -1));
  if (pipeOut) ::close(std::exchange(pipes.out[1], -1));
  const int outFd = pipeOut ? std::exchange(pipes.out[0], -1) : -1;
  int execErr = 0;
  int status = 0;
  struct rusage usage {};
  if (spec.rssSamples != nullptr) {
    execErr = execError(std::exchange(pipes.err[0], -1));
    RssSampler sampler(pid, !plan.launcher, start);  // strata-exec's own size left out
    waitSampling(pid, outFd, r.out, sampler, status, usage);
    *spec.rssSamples = sampler.take();
  } else {
    if (outFd >= 0) r.out = readAll(outFd);
    execErr = execError(std::exchange(pipes.err[0], -1));
    while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
    }
  }
  r.wallSeconds = now() - start;
  const std::string report =
      pipes.report[0] >= 0 ? readAll(std::exchange(pipes.report[0], -1)) : std::string();
  if (execErr != 0) {
    r.startErrno = execErr;
    return r;
  }
  fillResult(r, status, usage, plan.launcher ? &report : nullptr);
  return r;
}

}  // namespace strata::support
