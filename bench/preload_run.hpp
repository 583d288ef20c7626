// Running preload_workload (bench/preload_workload.cpp) as a child process, as preload_table
// and record_overhead do: the workload variants, the child's environment, and one run with
// its stdout and resource usage collected.
#pragma once
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

extern char** environ;

namespace strata::bench {

// One workload variant: what preload_workload is asked to run.
struct PreloadWorkload {
  const char* name;  // preload_workload's NAME
  int threads;
  const char* what;
  std::string label() const { return std::string(name) + "-" + std::to_string(threads) + "t"; }
};

inline constexpr PreloadWorkload kPreloadWorkloads[] = {
    {"churn", 1, "random-size churn, 16..4096 B log-uniform, 50k live"},
    {"churn", 2, "random-size churn, each thread its own half"},
    {"server", 1, "requests through a FIFO in one thread"},
    {"server", 2, "requests allocated by one thread, freed by the other"},
    {"grow-shrink", 1, "live set grows to ~200 MiB, shrinks in random order, twice"},
    {"grow-shrink", 2, "each thread grows half; frees dealt out at random across threads"},
    {"tiny", 1, "millions of 8..64 B objects freed in batches"},
    {"tiny", 2, "tiny, each thread its own half"},
};

// This process's environment without the variables named in `drop` (e.g. "LD_PRELOAD"), plus
// the NAME=VALUE settings in `add`.
inline std::vector<std::string> childEnvironment(std::initializer_list<std::string_view> drop,
                                                 const std::vector<std::string>& add) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view var = *e;
    bool dropped = false;
    for (std::string_view name : drop)
      dropped = dropped || (var.size() > name.size() && var.starts_with(name) && var[name.size()] == '=');
    if (!dropped) env.emplace_back(var);
  }
  env.insert(env.end(), add.begin(), add.end());
  return env;
}

// What one child run gave: whether it could be started, its wait status, stdout and usage.
struct ChildRun {
  std::string error;  // "pipe failed" / "fork failed"; empty when the child ran
  int status = 0;     // from wait4
  std::string out;
  struct rusage usage {};
};

// Runs `program NAME THREADS SCALE` for workload w with exactly the environment `env`,
// reading its stdout through a pipe and waiting for it (exit status 126: execve failed).
inline ChildRun runPreloadWorkload(const std::string& program, const PreloadWorkload& w,
                                   double scale, const std::vector<std::string>& env) {
  ChildRun run;
  std::vector<char*> envp;
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const std::string threads = std::to_string(w.threads);
  char scaleText[32];
  std::snprintf(scaleText, sizeof scaleText, "%g", scale);
  char* argv[] = {const_cast<char*>(program.c_str()), const_cast<char*>(w.name),
                  const_cast<char*>(threads.c_str()), scaleText, nullptr};
  int fds[2];
  if (::pipe(fds) != 0) {
    run.error = "pipe failed";
    return run;
  }
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    run.error = "fork failed";
    return run;
  }
  if (pid == 0) {
    ::close(fds[0]);
    ::dup2(fds[1], 1);
    ::close(fds[1]);
    ::execve(program.c_str(), argv, envp.data());
    ::_exit(126);
  }
  ::close(fds[1]);
  char buf[4096];
  for (ssize_t got; (got = ::read(fds[0], buf, sizeof buf)) != 0;) {
    if (got < 0) {
      if (errno == EINTR) continue;
      break;
    }
    run.out.append(buf, static_cast<std::size_t>(got));
  }
  ::close(fds[0]);
  while (::wait4(pid, &run.status, 0, &run.usage) < 0 && errno == EINTR) {
  }
  return run;
}

}  // namespace strata::bench
