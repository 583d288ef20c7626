// Sampling a process tree's resident size from /proc (rss_sampler.hpp).
#include "support/rss_sampler.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>

#include "strata/platform/page.hpp"

namespace strata::support {
namespace {

// The start of a small /proc file into `buf` (null-terminated); its length, 0 when it cannot
// be read (the process has gone).
std::size_t readSmall(const char* path, char* buf, std::size_t size) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  const ssize_t got = ::read(fd, buf, size - 1);
  ::close(fd);
  const std::size_t n = got > 0 ? static_cast<std::size_t>(got) : 0;
  buf[n] = '\0';
  return n;
}

// A process's resident bytes: statm's second field, in pages.
std::uint64_t residentBytes(int pid) {
  char path[64], buf[256];
  std::snprintf(path, sizeof path, "/proc/%d/statm", pid);
  if (readSmall(path, buf, sizeof buf) == 0) return 0;
  unsigned long long size = 0, resident = 0;
  if (std::sscanf(buf, "%llu %llu", &size, &resident) != 2) return 0;
  return static_cast<std::uint64_t>(resident) * platform::pageSize();
}

// The numeric entries of a /proc directory (processes, or a process's threads).
template <typename F>
void forEachNumeric(const char* dirPath, F&& f) {
  DIR* dir = ::opendir(dirPath);
  if (dir == nullptr) return;
  while (const dirent* e = ::readdir(dir)) {
    char* end = nullptr;
    const long id = std::strtol(e->d_name, &end, 10);
    if (end != e->d_name && *end == '\0' && id > 0) f(static_cast<int>(id));
  }
  ::closedir(dir);
}

// The children of `pid`, every thread's, from /proc/<pid>/task/<tid>/children.
void childrenOf(int pid, std::vector<int>& out) {
  char taskDir[64];
  std::snprintf(taskDir, sizeof taskDir, "/proc/%d/task", pid);
  forEachNumeric(taskDir, [&](int tid) {
    char path[96];
    std::snprintf(path, sizeof path, "/proc/%d/task/%d/children", pid, tid);
    std::vector<char> buf(4096);  // grown until the whole list fits
    while (readSmall(path, buf.data(), buf.size()) == buf.size() - 1) buf.resize(2 * buf.size());
    for (char* p = buf.data(); *p != '\0';) {
      char* end = nullptr;
      const long child = std::strtol(p, &end, 10);
      if (end == p) break;
      out.push_back(static_cast<int>(child));
      p = end;
    }
  });
}

// Whether this kernel has /proc/<pid>/task/<tid>/children (CONFIG_PROC_CHILDREN).
bool haveChildrenFiles() {
  static const bool have = [] {
    char path[96];
    std::snprintf(path, sizeof path, "/proc/%d/task/%d/children", ::getpid(), ::getpid());
    return ::access(path, R_OK) == 0;
  }();
  return have;
}

// Every process's parent, from /proc/<pid>/stat (the field after the name in parentheses).
std::unordered_multimap<int, int> childrenByParent() {
  std::unordered_multimap<int, int> byParent;
  forEachNumeric("/proc", [&](int pid) {
    char path[64], buf[512];
    std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
    if (readSmall(path, buf, sizeof buf) == 0) return;
    const char* close = std::strrchr(buf, ')');
    int parent = 0;
    if (close != nullptr && std::sscanf(close + 1, " %*c %d", &parent) == 1)
      byParent.emplace(parent, pid);
  });
  return byParent;
}

// `root` and its descendants, the root first.
std::vector<int> processTree(int root) {
  std::vector<int> tree{root};
  if (haveChildrenFiles()) {
    for (std::size_t i = 0; i < tree.size(); ++i) childrenOf(tree[i], tree);
    return tree;
  }
  const std::unordered_multimap<int, int> byParent = childrenByParent();
  for (std::size_t i = 0; i < tree.size(); ++i) {
    const auto [first, last] = byParent.equal_range(tree[i]);
    for (auto it = first; it != last; ++it) tree.push_back(it->second);
  }
  return tree;
}

double monotonicNow() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// A descriptor that polls readable when `pid` ends; -1 where the kernel has no pidfd_open.
int openPidFd(int pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

// Reads what `fd` has into `out`; false at its end (or on an error), when it is closed.
bool readSome(int fd, std::string& out) {
  char buf[65536];
  const ssize_t got = ::read(fd, buf, sizeof buf);
  if (got > 0) {
    out.append(buf, static_cast<std::size_t>(got));
    return true;
  }
  if (got < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  ::close(fd);
  return false;
}

}  // namespace

void waitSampling(int pid, int outFd, std::string& out, RssSampler& sampler, int& status,
                  struct rusage& usage) {
  const int pidFd = openPidFd(pid);
  bool reaped = false;
  while (!reaped || outFd >= 0) {
    double now = monotonicNow();
    if (!reaped && now >= sampler.due()) {
      sampler.sample(now);
      now = monotonicNow();
    }
    pollfd fds[2]{};
    nfds_t n = 0;
    if (outFd >= 0) fds[n++] = {outFd, POLLIN, 0};
    if (!reaped && pidFd >= 0) fds[n++] = {pidFd, POLLIN, 0};
    int timeout = -1;
    if (!reaped) {
      timeout = static_cast<int>(std::ceil(std::max(0.0, sampler.due() - now) * 1000));
      if (pidFd < 0) timeout = std::min(timeout, 10);
    }
    ::poll(fds, n, timeout);  // EINTR (a relayed signal): look again
    if (outFd >= 0 && fds[0].revents != 0 && !readSome(outFd, out)) outFd = -1;
    if (!reaped) {
      const pid_t w = ::wait4(pid, &status, WNOHANG, &usage);
      reaped = w == pid || (w < 0 && errno != EINTR);
    }
  }
  if (pidFd >= 0) ::close(pidFd);
}

std::uint64_t processTreeRssBytes(int root, bool includeRoot) {
  std::uint64_t total = 0;
  const std::vector<int> tree = processTree(root);
  for (std::size_t i = includeRoot ? 0 : 1; i < tree.size(); ++i) total += residentBytes(tree[i]);
  return total;
}

RssSampler::RssSampler(int root, bool includeRoot, double start)
    : root_(root), includeRoot_(includeRoot), start_(start), due_(start) {}

void RssSampler::record(double now, std::uint64_t bytes) {
  if (samples_.size() >= kMaxSamples) {
    // Keep samples 0, 2, 4...: still evenly spaced, at twice the interval.
    std::size_t kept = 0;
    for (std::size_t i = 0; i < samples_.size(); i += 2) samples_[kept++] = samples_[i];
    samples_.resize(kept);
    interval_ *= 2;
  }
  samples_.push_back({now - start_, bytes});
  // The next due time on the grid from the start, skipping any this sample overran.
  due_ += interval_;
  if (due_ <= now) due_ = now + interval_;
}

void RssSampler::sample(double now) { record(now, processTreeRssBytes(root_, includeRoot_)); }

}  // namespace strata::support
