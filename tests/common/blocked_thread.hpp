// For tests that show a lock keeps another thread out: BlockedThread runs a call on a thread
// of its own and tells, without relying on how long anything takes, whether the call is
// held up: the thread has said it is about to make the call, has not returned from it, and
// is seen waiting: asleep in a futex wait (a mutex), or, for a lock that spins and yields
// instead of sleeping, having spent 20 ms of its own CPU time inside a call that takes
// microseconds when nothing holds it up. A sleep-then-check test passes a lock that lets
// the thread through whenever the thread is simply not scheduled in time; this one waits
// (up to a generous limit) until the thread is observably stuck or done.
#pragma once
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>

#include <gtest/gtest.h>

namespace strata::test {

// The scheduler state of thread `tid` of this process ('R' running, 'S' sleeping, ...), from
// /proc/self/task/TID/stat; '?' when it cannot be read (the thread has ended).
inline char threadState(long tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  const std::size_t close = stat.rfind(')');  // after the name, which may hold anything
  if (close == std::string::npos || close + 2 >= stat.size()) return '?';
  return stat[close + 2];
}

// The system call thread `tid` is blocked in, from /proc/self/task/TID/syscall: its number;
// -1 when it is not in one ("running", or blocked outside a system call); -2 when the file
// cannot be read.
inline long threadSyscall(long tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/syscall");
  std::string first;
  if (!(in >> first)) return -2;
  if (first == "running") return -1;
  try {
    return std::stol(first);
  } catch (...) {
    return -2;
  }
}

class BlockedThread {
 public:
  // Starts a thread that announces itself, then runs `call`.
  explicit BlockedThread(std::function<void()> call) : call_(std::move(call)) {
    thread_ = std::thread([this] {
      tid_.store(static_cast<long>(::syscall(SYS_gettid)));
      aboutToCall_.store(true);
      call_();
      returned_.store(true);
    });
  }
  BlockedThread(const BlockedThread&) = delete;
  BlockedThread& operator=(const BlockedThread&) = delete;
  ~BlockedThread() {
    if (thread_.joinable()) thread_.join();
  }

  // Waits until the thread is inside the call and observably held up there (true), or has
  // returned from it (false). `why` says what was seen. Gives up (false) after `limit`, which
  // only a thread that gets no CPU at all for that long can reach.
  bool waitUntilHeldUp(std::string& why,
                       std::chrono::seconds limit = std::chrono::seconds(60)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!aboutToCall_.load()) {
      if (std::chrono::steady_clock::now() > deadline) {
        why = "the thread never started the call";
        return false;
      }
      std::this_thread::yield();
    }
    clockid_t clock;
    if (::pthread_getcpuclockid(thread_.native_handle(), &clock) != 0) {
      why = returned_.load() ? "the call returned" : "cannot read the thread's CPU clock";
      return false;
    }
    const std::uint64_t cpu0 = cpuNs(clock);
    const long tid = tid_.load();
    for (;;) {
      // Read what the thread is doing first, then whether it has returned: a thread seen
      // waiting that has still not returned afterwards was waiting inside the call.
      const char state = threadState(tid);
      const long call = threadSyscall(tid);
      const std::uint64_t cpu = cpuNs(clock);
      const std::uint64_t spent = cpu > cpu0 ? cpu - cpu0 : 0;
      if (returned_.load()) {
        why = "the call returned";
        return false;
      }
      if (state == 'S' && (call == SYS_futex || call == -2)) {
        why = "asleep in a futex wait";
        return true;
      }
      if (spent >= kSpinningNs) {
        why = "spent " + std::to_string(spent / 1000000) + " ms of CPU time in the call";
        return true;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        std::ostringstream s;
        s << "neither returned nor seen waiting (state " << state << ", system call " << call
          << ", " << spent / 1000 << " us of CPU time)";
        why = s.str();
        return false;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

  // Whether the call has returned.
  bool returned() const { return returned_.load(); }

  // Waits for the thread to finish.
  void join() { thread_.join(); }

 private:
  // CPU time a call that takes microseconds cannot use up unless it is waiting.
  static constexpr std::uint64_t kSpinningNs = 20'000'000;

  // A thread's CPU time in ns (0 once the thread has ended).
  static std::uint64_t cpuNs(clockid_t clock) {
    timespec ts{};
    if (::clock_gettime(clock, &ts) != 0) return 0;
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
           static_cast<std::uint64_t>(ts.tv_nsec);
  }

  std::function<void()> call_;
  std::atomic<long> tid_{0};
  std::atomic<bool> aboutToCall_{false};
  std::atomic<bool> returned_{false};
  std::thread thread_;
};

// Shows that between hold() and release() another thread's heap.malloc(size), and then its
// heap.free, are held up, and that each returns once release() is called. `held` says when
// in the failure messages ("while the heap was locked").
template <class H, class Hold, class Release>
void expectMallocAndFreeHeldOut(H& heap, std::size_t size, Hold hold, Release release,
                                const char* held) {
  void* p = nullptr;
  std::string why;
  hold();
  BlockedThread mallocs([&] { p = heap.malloc(size); });
  EXPECT_TRUE(mallocs.waitUntilHeldUp(why)) << "malloc ran " << held << ": " << why;
  release();
  mallocs.join();
  ASSERT_NE(p, nullptr);
  hold();
  BlockedThread frees([&] { heap.free(p); });
  EXPECT_TRUE(frees.waitUntilHeldUp(why)) << "free ran " << held << ": " << why;
  release();
  frees.join();
  EXPECT_TRUE(frees.returned());
}

}  // namespace strata::test
