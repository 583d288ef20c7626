// Process measurements for the replay (measure.hpp).
#include "measure.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

extern char** environ;

namespace strata::replay {

double cpuNow() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::uint64_t startBaselineBytes() noexcept {
  const std::uint64_t anon = support::anonResidentBytes();
  const std::uint64_t heap = support::mappingResidentBytes("[heap]");
  return anon > heap ? anon - heap : 0;
}

bool baselineFromChild(const std::string& replayer, std::uint64_t& out, std::string& error) {
  std::vector<char*> envp;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e)
    if (!std::string_view(*e).starts_with("LD_PRELOAD=")) envp.push_back(*e);
  envp.push_back(nullptr);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    error = std::string("cannot make a pipe: ") + std::strerror(errno);
    return false;
  }
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  char arg0[] = "strata-replayer";
  char arg1[] = "--measure-baseline";
  char* argv[] = {arg0, arg1, nullptr};
  pid_t pid = 0;
  const int err = ::posix_spawn(&pid, replayer.c_str(), &actions, nullptr, argv, envp.data());
  ::posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (err != 0) {
    ::close(fds[0]);
    error = "cannot start " + replayer + ": " + std::strerror(err);
    return false;
  }
  char buf[64];
  std::size_t got = 0;
  for (;;) {
    const ssize_t r = ::read(fds[0], buf + got, sizeof buf - 1 - got);
    if (r > 0) got += static_cast<std::size_t>(r);
    else if (r < 0 && errno == EINTR) continue;
    if (r <= 0 || got + 1 >= sizeof buf) break;
  }
  ::close(fds[0]);
  buf[got] = '\0';
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  char* end = nullptr;
  const unsigned long long v = std::strtoull(buf, &end, 10);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || end == buf) {
    error = replayer + " --measure-baseline printed no baseline";
    return false;
  }
  out = v;
  return true;
}

}  // namespace strata::replay
