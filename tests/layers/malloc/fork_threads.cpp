// fork() from a threaded program, linked against libc only so that LD_PRELOAD decides which
// allocator it runs on.
//
// Four threads allocate, fill, check and free in loops (handing some objects to each other
// through a shared exchange, so frees cross threads) while the main thread fork()s repeatedly
// (50 times by default). Each child allocates and frees with malloc, realloc, calloc,
// posix_memalign, std::string and std::vector, frees a block its parent allocated before the
// fork, and every fifth child also starts a thread that allocates and joins it; then it
// _exit()s with 0 if every check passed. The parent waits for each child with a timeout: a
// child still running then is taken for a malloc lock held across fork() (the allocator's
// pthread_atfork handling is missing or wrong), killed, and counted as a failure. Exits 0 only
// if every child exited 0 and every check in the parent passed; prints one summary line.
//
// Usage: malloc_fork_threads [--forks N] [--timeout-ms MS]
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rng.hpp"

namespace {

using strata_malloc_test::Rng;

// The byte an object with tag t holds everywhere (never 0, so a zeroed block is caught).
unsigned char tagByte(std::uint64_t t) { return static_cast<unsigned char>((t * 131) % 255 + 1); }

// A block filled with its tag byte.
struct Block {
  unsigned char* p = nullptr;
  std::size_t n = 0;
  std::uint64_t tag = 0;
};

// Allocates a block of n bytes filled with tag's byte, or an empty Block if malloc failed.
Block make(std::size_t n, std::uint64_t tag) {
  Block b{static_cast<unsigned char*>(std::malloc(n)), n, tag};
  if (b.p != nullptr) std::memset(b.p, tagByte(tag), n);
  return b;
}

// True if every byte of b still holds its tag byte.
bool intact(const Block& b) {
  unsigned char want = tagByte(b.tag);
  for (std::size_t i = 0; i < b.n; ++i)
    if (b.p[i] != want) return false;
  return true;
}

// Writes a message with write(2), which takes no lock (usable in a child of a threaded parent).
void say(const char* msg) {
  ssize_t ignored = write(2, msg, std::strlen(msg));
  (void)ignored;
}

std::atomic<bool> gStop{false};
std::atomic<long> gParentFailures{0};
std::atomic<long> gThreadOps{0};

// A shared exchange: threads put blocks here and take others' blocks out to free them.
std::mutex gExchangeLock;
std::vector<Block> gExchange;

// One allocating thread: until told to stop, allocates blocks of random sizes (up to 64 KiB,
// now and then 256 KiB), checks and frees them, and trades some through the exchange.
void churn(std::uint64_t seed) {
  Rng r(seed);
  std::vector<Block> live(64);
  std::uint64_t tag = seed << 32;
  long ops = 0;
  while (!gStop.load(std::memory_order_relaxed)) {
    Block& b = live[r.below(live.size())];
    if (b.p != nullptr) {
      if (!intact(b)) gParentFailures.fetch_add(1);
      if (r.below(4) == 0) {
        std::lock_guard<std::mutex> lock(gExchangeLock);
        if (gExchange.size() < 256) {
          gExchange.push_back(b);
          b = Block{};
        }
        if (!gExchange.empty() && r.below(2) == 0) {
          Block other = gExchange.back();
          gExchange.pop_back();
          if (!intact(other)) gParentFailures.fetch_add(1);
          std::free(other.p);
        }
      }
      std::free(b.p);
      b = Block{};
    } else {
      std::size_t n = r.below(100) == 0 ? (256u << 10) : 1 + r.below(r.below(8) == 0 ? 65536 : 512);
      b = make(n, ++tag);
      if (b.p == nullptr) gParentFailures.fetch_add(1);
    }
    ++ops;
    if ((ops & 255) == 0) {
      std::string s(static_cast<std::size_t>(r.below(1000)), 'x');
      s += std::to_string(ops);
      if (s.back() != static_cast<char>('0' + ops % 10)) gParentFailures.fetch_add(1);
    }
  }
  for (Block& b : live) {
    if (b.p != nullptr && !intact(b)) gParentFailures.fetch_add(1);
    std::free(b.p);
  }
  gThreadOps.fetch_add(ops);
}

// Allocation work in a child (or in a thread the child starts); returns the number of failed
// checks.
int childWork(std::uint64_t seed) {
  int failures = 0;
  Rng r(seed);
  std::vector<Block> blocks;
  for (int i = 0; i < 200; ++i) {
    Block b = make(1 + r.below(i % 10 == 0 ? 200000 : 300), seed * 1000 + i);
    if (b.p == nullptr) return failures + 1;
    blocks.push_back(b);
  }
  for (Block& b : blocks) {
    if (!intact(b)) ++failures;
    std::size_t n = b.n * 2 + 1;
    auto* q = static_cast<unsigned char*>(std::realloc(b.p, n));
    if (q == nullptr) {
      ++failures;
      continue;
    }
    for (std::size_t i = 0; i < b.n; ++i)
      if (q[i] != tagByte(b.tag)) {
        ++failures;
        break;
      }
    std::free(q);
  }
  auto* z = static_cast<unsigned char*>(std::calloc(1000, 8));
  if (z == nullptr) return failures + 1;
  for (int i = 0; i < 8000; ++i)
    if (z[i] != 0) {
      ++failures;
      break;
    }
  std::free(z);
  void* a = nullptr;
  if (posix_memalign(&a, 4096, 100) != 0 || reinterpret_cast<std::uintptr_t>(a) % 4096 != 0)
    ++failures;
  std::free(a);
  std::vector<std::string> words;
  for (int i = 0; i < 2000; ++i)
    words.push_back("word-" + std::to_string(i) + std::string(i % 50, 'y'));
  std::size_t total = 0;
  for (const std::string& w : words) total += w.size();
  std::size_t expected = 0;
  for (int i = 0; i < 2000; ++i)
    expected += 5 + std::to_string(i).size() + static_cast<std::size_t>(i % 50);
  if (total != expected) ++failures;
  std::vector<int> v;
  for (int i = 0; i < 100000; ++i) v.push_back(i);
  if (v[99999] != 99999) ++failures;
  return failures;
}

// The child's whole life: work, free a block inherited from the parent, optionally work in a
// new thread too; then _exit with the failure count (0 = success).
[[noreturn]] void child(int number, Block inherited) {
  alarm(60);  // never outlive a parent that was killed
  int failures = childWork(static_cast<std::uint64_t>(number) + 1);
  if (!intact(inherited)) ++failures;
  std::free(inherited.p);
  if (number % 5 == 0) {
    int threadFailures = 0;
    std::thread t([&] { threadFailures = childWork(static_cast<std::uint64_t>(number) + 5000); });
    t.join();
    failures += threadFailures;
  }
  if (failures != 0) say("fork_threads: a check failed in a child\n");
  _exit(failures == 0 ? 0 : 1);
}

// Waits up to timeoutMs for pid; kills it if it is still running. Returns 0 if it exited 0,
// otherwise a description of what went wrong.
const char* reap(pid_t pid, long timeoutMs) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
  int status = 0;
  for (;;) {
    pid_t got = waitpid(pid, &status, WNOHANG);
    if (got == pid) break;
    if (got < 0) return "waitpid failed";
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return "child hung (a malloc lock held across fork?) and was killed";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (WIFSIGNALED(status)) return "child killed by a signal";
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "child exited non-zero";
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  int forks = 50;
  long timeoutMs = 10000;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--forks" && i + 1 < argc)
      forks = std::atoi(argv[++i]);
    else if (a == "--timeout-ms" && i + 1 < argc)
      timeoutMs = std::atol(argv[++i]);
    else {
      std::fprintf(stderr, "usage: malloc_fork_threads [--forks N] [--timeout-ms MS]\n");
      return 2;
    }
  }
  std::fflush(stdout);
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (std::uint64_t t = 1; t <= 4; ++t) threads.emplace_back(churn, t);
  int childFailures = 0;
  for (int i = 0; i < forks; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    Block inherited =
        make(1 + static_cast<std::size_t>(i) * 997 % 5000, 777 + static_cast<std::uint64_t>(i));
    if (inherited.p == nullptr) {
      ++childFailures;
      continue;
    }
    pid_t pid = fork();
    if (pid < 0) {
      std::perror("fork");
      ++childFailures;
    } else if (pid == 0) {
      child(i, inherited);
    } else {
      const char* err = reap(pid, timeoutMs);
      if (err != nullptr) {
        std::fprintf(stderr, "fork_threads: fork %d: %s\n", i, err);
        ++childFailures;
      }
    }
    if (!intact(inherited)) gParentFailures.fetch_add(1);
    std::free(inherited.p);
  }
  gStop.store(true);
  for (std::thread& t : threads) t.join();
  for (Block& b : gExchange) {
    if (!intact(b)) gParentFailures.fetch_add(1);
    std::free(b.p);
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  bool ok = childFailures == 0 && gParentFailures.load() == 0;
  std::printf(
      "fork_threads: %s forks=%d failed_children=%d parent_failures=%ld thread_ops=%ld "
      "time=%.2fs\n",
      ok ? "OK" : "FAILED", forks, childFailures, gParentFailures.load(), gThreadOps.load(), secs);
  return ok ? 0 : 1;
}
