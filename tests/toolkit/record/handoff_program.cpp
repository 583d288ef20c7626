// record_handoff_program THREADS STEPS: threads hand objects to each other through a shared
// array of slots, so most frees and reallocs happen on a thread other than the one that made
// the object, at the same time as other threads allocate. Each step takes a random slot's
// object out (atomic exchange) and frees it, reallocates it (1 step in 8) or leaves it, and
// puts a fresh object in. Prints "mallocs=M frees=F reallocs=R" (its own calls) at the end,
// when every slot has been emptied. record_test checks that the trace names only live objects.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t kSlots = 1024;
std::atomic<void*> gSlots[kSlots];
std::atomic<long> gMallocs{0}, gFrees{0}, gReallocs{0};

void work(unsigned seed, long steps) {
  std::uint64_t x = 0x9E3779B97F4A7C15ull * (seed + 1);
  for (long i = 0; i < steps; ++i) {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    const std::uint64_t r = x * 0x2545F4914F6CDD1Dull;
    std::atomic<void*>& slot = gSlots[r % kSlots];
    void* old = slot.exchange(nullptr, std::memory_order_acq_rel);
    if (old != nullptr && (r >> 20) % 8 == 0) {
      void* grown = std::realloc(old, 16 + (r >> 32) % 2000);
      if (grown == nullptr) std::abort();
      gReallocs.fetch_add(1, std::memory_order_relaxed);
      old = slot.exchange(grown, std::memory_order_acq_rel);
      if (old == nullptr) continue;
    }
    if (old != nullptr) {
      std::free(old);
      gFrees.fetch_add(1, std::memory_order_relaxed);
    }
    void* p = std::malloc(16 + (r >> 40) % 1000);
    if (p == nullptr) std::abort();
    gMallocs.fetch_add(1, std::memory_order_relaxed);
    void* displaced = slot.exchange(p, std::memory_order_acq_rel);
    if (displaced != nullptr) {
      std::free(displaced);
      gFrees.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const unsigned threads = static_cast<unsigned>(std::atoi(argv[1]));
  const long steps = std::atol(argv[2]);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work, t, steps);
  for (std::thread& t : pool) t.join();
  for (std::atomic<void*>& s : gSlots) {
    if (void* p = s.exchange(nullptr)) {
      std::free(p);
      gFrees.fetch_add(1, std::memory_order_relaxed);
    }
  }
  std::printf("mallocs=%ld frees=%ld reallocs=%ld\n", gMallocs.load(), gFrees.load(),
              gReallocs.load());
  return 0;
}
