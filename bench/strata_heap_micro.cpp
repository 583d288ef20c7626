// strata_heap_micro: StrataHeap against glibc malloc on single-thread random churn, called
// directly (not preloaded): 100k slots filled, then 10M steps that each free a random
// slot's object or allocate 16..1024 bytes into it, then everything freed. Each run is in
// its own fork()ed child; prints ns per step (including a xorshift step) and the rise of
// peak RSS (VmHWM) over the child's baseline, median of 5 runs.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "strata/general/strata_heap.hpp"

namespace {

constexpr std::size_t kSlots = 100'000;
constexpr std::size_t kSteps = 10'000'000;

std::size_t statusKiB(const char* field) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  char line[256];
  std::size_t v = 0;
  const std::size_t len = std::strlen(field);
  while (f && std::fgets(line, sizeof line, f))
    if (std::strncmp(line, field, len) == 0) v = std::strtoull(line + len, nullptr, 10);
  if (f) std::fclose(f);
  return v;
}

struct Result {
  double nsPerStep;
  double peakMiB;
};

template <class Malloc, class Free>
Result churn(Malloc&& m, Free&& f) {
  void** slot = static_cast<void**>(::operator new(kSlots * sizeof(void*)));
  std::memset(slot, 0, kSlots * sizeof(void*));
  std::uint64_t x = 88172645463325252ull;
  auto next = [&] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  const std::size_t base = statusKiB("VmRSS:");
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < kSlots; ++i) {
    const std::size_t n = 16 + next() % 1009;
    slot[i] = m(n);
    static_cast<char*>(slot[i])[0] = 1;
  }
  for (std::size_t i = 0; i < kSteps; ++i) {
    const std::uint64_t r = next();
    void*& s = slot[r % kSlots];
    if (s != nullptr) {
      f(s);
      s = nullptr;
    } else {
      const std::size_t n = 16 + (r >> 32) % 1009;
      s = m(n);
      static_cast<char*>(s)[0] = 1;
    }
  }
  for (std::size_t i = 0; i < kSlots; ++i) f(slot[i]);
  const auto t1 = std::chrono::steady_clock::now();
  const double ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / (kSteps + 2 * kSlots);
  return {ns, (statusKiB("VmHWM:") - base) / 1024.0};
}

// Runs one measurement in a child so each starts from a fresh process.
Result inChild(int which) {
  int fd[2];
  if (::pipe(fd) != 0) std::abort();
  const pid_t pid = ::fork();
  if (pid == 0) {
    Result r{};
    if (which == 0) {
      r = churn([](std::size_t n) { return std::malloc(n); }, [](void* p) { std::free(p); });
    } else {
      alignas(strata::StrataHeap) static unsigned char storage[sizeof(strata::StrataHeap)];
      auto* h = new (storage) strata::StrataHeap();
      h->free(h->malloc(1));
      r = churn([h](std::size_t n) { return h->malloc(n); }, [h](void* p) { h->free(p); });
    }
    if (::write(fd[1], &r, sizeof r) != sizeof r) ::_exit(1);
    ::_exit(0);
  }
  Result r{};
  if (::read(fd[0], &r, sizeof r) != sizeof r) std::abort();
  ::waitpid(pid, nullptr, 0);
  ::close(fd[0]);
  ::close(fd[1]);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 5;
  const char* names[] = {"glibc", "StrataHeap"};
  std::printf("%-12s %10s %14s   (median of %d; random churn 16..1024 B, 100k live, 10M steps)\n",
              "allocator", "ns/step", "peak RSS MiB", runs);
  for (int which = 0; which < 2; ++which) {
    std::vector<double> ns, mib;
    for (int i = 0; i < runs; ++i) {
      const Result r = inChild(which);
      ns.push_back(r.nsPerStep);
      mib.push_back(r.peakMiB);
    }
    std::sort(ns.begin(), ns.end());
    std::sort(mib.begin(), mib.end());
    std::printf("%-12s %10.1f %14.1f\n", names[which], ns[ns.size() / 2], mib[mib.size() / 2]);
  }
}
