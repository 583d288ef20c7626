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
namespace {

// Reads a small /proc file into buf (no allocation); returns the length or 0.
std::size_t readProc(const char* path, char* buf, std::size_t cap) noexcept {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  std::size_t got = 0;
  while (got + 1 < cap) {
    const ssize_t r = ::read(fd, buf + got, cap - 1 - got);
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
  ::close(fd);
  buf[got] = '\0';
  return got;
}

// statm's resident and shared page counts.
bool statm(std::uint64_t& resident, std::uint64_t& shared) noexcept {
  char buf[256];
  if (readProc("/proc/self/statm", buf, sizeof buf) == 0) return false;
  char* p = buf;
  std::strtoull(p, &p, 10);
  resident = std::strtoull(p, &p, 10);
  shared = std::strtoull(p, &p, 10);
  return true;
}

std::uint64_t pageSize() noexcept { return static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)); }

}  // namespace

std::uint64_t anonResidentBytes() noexcept {
  std::uint64_t resident = 0, shared = 0;
  if (!statm(resident, shared)) return 0;
  return resident > shared ? (resident - shared) * pageSize() : 0;
}

std::uint64_t fileResidentBytes() noexcept {
  std::uint64_t resident = 0, shared = 0;
  if (!statm(resident, shared)) return 0;
  return shared * pageSize();
}

std::uint64_t statusField(const char* name) noexcept {
  char buf[4096];
  if (readProc("/proc/self/status", buf, sizeof buf) == 0) return 0;
  const char* at = std::strstr(buf, name);
  if (at == nullptr) return 0;
  return std::strtoull(at + std::strlen(name), nullptr, 10) * 1024;
}

std::uint64_t brkHeapResidentBytes() noexcept {
  // smaps streams through a fixed buffer line by line: after the "[heap]" header line, the
  // first "Rss:" line is the heap's.
  const int fd = ::open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[8192];
  std::size_t have = 0;
  bool inHeap = false;
  std::uint64_t rss = 0;
  for (;;) {
    const ssize_t r = ::read(fd, buf + have, sizeof buf - 1 - have);
    if (r <= 0) break;
    have += static_cast<std::size_t>(r);
    buf[have] = '\0';
    char* line = buf;
    char* nl;
    bool done = false;
    while ((nl = std::strchr(line, '\n')) != nullptr) {
      *nl = '\0';
      const std::string_view l(line);
      if (l.ends_with("[heap]")) {
        inHeap = true;
      } else if (inHeap && l.starts_with("Rss:")) {
        rss = std::strtoull(line + 4, nullptr, 10) * 1024;
        done = true;
        break;
      }
      line = nl + 1;
    }
    if (done) break;
    have = static_cast<std::size_t>(buf + have - line);
    std::memmove(buf, line, have);
    if (have + 1 >= sizeof buf) have = 0;  // a line longer than the buffer: not one we need
  }
  ::close(fd);
  return rss;
}

void resetPeakRss() noexcept {
  const int fd = ::open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;
  const ssize_t w = ::write(fd, "5", 1);
  (void)w;
  ::close(fd);
}

double cpuNow() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::uint64_t startBaselineBytes() noexcept {
  const std::uint64_t anon = anonResidentBytes();
  const std::uint64_t heap = brkHeapResidentBytes();
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
