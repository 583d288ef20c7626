// preload_workload NAME THREADS SCALE: one allocation workload, run by bench/preload_table
// under each allocator by LD_PRELOAD. A plain C++ program over the process's malloc/free
// (no Strata heap inside), so whatever is preloaded is what it measures.
//
// Workloads (deterministic seeds; every object's bytes are written when it is allocated and
// checked before it is freed; THREADS is 1 or 2):
//   churn        50k live objects of 16..4096 B (log-uniform); each of 700k steps frees a
//                random one and allocates a new one in its place. 2 threads: each its own
//                copy with half the objects and half the steps.
//   server       requests of 32..1024 B (one in 16 a 4..32 KiB body) allocated by one thread
//                and handed through a queue to the other, which checks and frees them; each
//                request also allocates and frees a short-lived 64..256 B scratch object.
//                1M requests per side; 1 thread: both sides' requests through one FIFO
//                of the same depth (1024).
//   grow-shrink  the live set grows to ~200 MiB of 16 B..16 KiB objects, then shrinks to
//                nothing in random order; twice. 2 threads: each grows half, and the frees
//                are dealt out at random, so about half of each thread's frees are of the
//                other thread's objects.
//   tiny         24 batches of 100k objects of 8..64 B; a batch is freed (in a shuffled
//                order) eight batches after it was allocated. 2 threads: each its own copy
//                with batches of 50k. SCALE < 1 shrinks the batches.
// SCALE multiplies the amount of work (1 = full size, 0.2..1 s on glibc).
//
// Output on stdout, for the driver: "time_ms T" (the workload only, process start-up and
// table set-up excluded) and "malloc PATH" (the object that defines malloc in this process,
// so the driver can check the preload took effect). A content check failing exits 3, an
// allocation failing exits 4, a bad command line exits 2. The objects and their checks, and
// the server workload, are in preload_workload/.
#include <dlfcn.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "preload_workload/objects.hpp"
#include "preload_workload/server.hpp"

namespace pw {

// ---- churn ----------------------------------------------------------------------------

// Random-size churn: a fixed number of live slots, each step replacing a random one.
// The slot picks are a table drawn before the clock, shifted every 64k steps.
struct Churn {
  Rng rng;
  Sizes sizes;
  std::size_t live, steps;
  std::vector<std::uint32_t> picks;  // the slot each step replaces
  std::vector<Object> slots;

  Churn(std::uint64_t seed, double scale)
      : rng(seed),
        sizes(rng, [](Rng& r) { return r.logUniform(16, 4096); }),
        live(std::max<std::size_t>(500, static_cast<std::size_t>(50000 * std::min(scale, 1.0)))),
        steps(static_cast<std::size_t>(700000 * scale)),
        picks(1 << 16),
        slots(live) {
    for (auto& p : picks) p = static_cast<std::uint32_t>(rng.below(live));
  }
  void run() {
    for (auto& o : slots) o = make(sizes.next(), rng.tag());
    for (std::size_t s = 0; s < steps; ++s) {
      Object& o = slots[picks[s & (picks.size() - 1)]];
      checkAndFree(o);
      o = make(sizes.next(), static_cast<std::uint8_t>(o.tag % 255 + 1));
      if ((s & 0xffff) == 0xffff)  // a fresh set of slot picks now and then
        for (auto& p : picks) p = static_cast<std::uint32_t>((p + s + 7919) % live);
    }
    for (auto& o : slots) checkAndFree(o);
  }
};

// ---- grow-shrink ----------------------------------------------------------------------

// Sizes and free order drawn before the clock: thread t allocates objs[t] in order, and in
// the shrink phase frees the objects order[t] names (indices into the concatenation).
struct GrowShrink {
  int threads;
  std::vector<std::vector<std::uint32_t>> sizes;  // per thread
  std::vector<std::vector<Object>> objs;          // per thread
  std::vector<std::vector<std::uint32_t>> order;  // per thread: global indices to free
  std::vector<std::size_t> base;                  // first global index of each thread

  GrowShrink(int t, double scale) : threads(t), sizes(t), objs(t), order(t), base(t) {
    Rng rng(303);
    const double target = 200.0 * 1024 * 1024 * scale / t;
    std::size_t total = 0;
    for (int i = 0; i < t; ++i) {
      base[i] = total;
      double bytes = 0;
      while (bytes < target) {
        sizes[i].push_back(static_cast<std::uint32_t>(rng.logUniform(16, 16384)));
        bytes += sizes[i].back();
      }
      objs[i].resize(sizes[i].size());
      total += sizes[i].size();
    }
    std::vector<std::uint32_t> all(total);
    for (std::size_t k = 0; k < total; ++k) all[k] = static_cast<std::uint32_t>(k);
    for (std::size_t k = total; k > 1; --k) std::swap(all[k - 1], all[rng.below(k)]);
    for (std::size_t k = 0; k < total; ++k) order[k * t / total].push_back(all[k]);
  }

  // The object with this index in the concatenation of the threads' objects.
  Object& at(std::uint32_t global) {
    int i = threads - 1;
    while (base[i] > global) --i;
    return objs[i][global - base[i]];
  }

  void run() {
    std::barrier sync(threads);
    auto body = [&](int me) {
      Rng rng(404 + me);
      for (int cycle = 0; cycle < 2; ++cycle) {
        for (std::size_t k = 0; k < sizes[me].size(); ++k)
          objs[me][k] = make(sizes[me][k], rng.tag());
        sync.arrive_and_wait();
        for (std::uint32_t g : order[me]) checkAndFree(at(g));
        sync.arrive_and_wait();
      }
    };
    std::vector<std::thread> others;
    for (int i = 1; i < threads; ++i) others.emplace_back(body, i);
    body(0);
    for (auto& th : others) th.join();
  }
};

// ---- tiny -----------------------------------------------------------------------------

// Many tiny objects in batches: kKept batches live, the oldest freed (in a shuffled order)
// before each new batch is allocated.
struct Tiny {
  static constexpr std::size_t kKept = 8, kBatches = 24;
  Rng rng;
  std::size_t batch;                     // objects per batch
  std::vector<std::uint8_t> sizes;       // batch sizes, 8..64
  std::vector<std::uint32_t> freeOrder;  // a shuffled 0..batch-1
  std::vector<std::vector<Object>> ring;

  Tiny(std::uint64_t seed, double scale)
      : rng(seed),
        batch(std::max<std::size_t>(1000, static_cast<std::size_t>(100000 * std::min(scale, 1.0)))),
        sizes(batch),
        freeOrder(batch),
        ring(kKept, std::vector<Object>(batch)) {
    for (auto& s : sizes) s = static_cast<std::uint8_t>(8 + rng.below(57));
    for (std::size_t k = 0; k < batch; ++k) freeOrder[k] = static_cast<std::uint32_t>(k);
    for (std::size_t k = batch; k > 1; --k) std::swap(freeOrder[k - 1], freeOrder[rng.below(k)]);
  }

  // Checks and frees every object of one batch, in the shuffled order.
  void freeBatch(std::vector<Object>& b) {
    for (std::uint32_t k : freeOrder) checkAndFree(b[k]);
  }

  void run() {
    for (std::size_t b = 0; b < kBatches; ++b) {
      std::vector<Object>& slot = ring[b % kKept];
      if (b >= kKept) freeBatch(slot);
      const std::uint8_t tag = rng.tag();
      for (std::size_t k = 0; k < batch; ++k) slot[k] = make(sizes[k], tag);
    }
    for (std::size_t b = kBatches - kKept; b < kBatches; ++b) freeBatch(ring[b % kKept]);
  }
};

// Times one copy of W per thread, each with its own seed, its own data (built before the
// clock starts) and 1/threads of the work, so that the 2-thread variant does as much in all
// as the 1-thread one. Returns the wall time in ms.
template <class W>
double timeCopies(int threads, double scale) {
  std::vector<W> ws;
  ws.reserve(threads);
  for (int i = 0; i < threads; ++i) ws.emplace_back(1000 + 17 * i, scale / threads);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> others;
  for (int i = 1; i < threads; ++i) others.emplace_back([&ws, i] { ws[i].run(); });
  ws[0].run();
  for (auto& th : others) th.join();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace pw

int main(int argc, char** argv) {
  using namespace pw;
  if (argc != 4) die(2, "usage: preload_workload churn|server|grow-shrink|tiny THREADS SCALE");
  const std::string name = argv[1];
  const int threads = std::atoi(argv[2]);
  const double scale = std::atof(argv[3]);
  if (threads < 1 || threads > 2 || !(scale > 0)) die(2, "THREADS must be 1 or 2 and SCALE > 0");

  double ms = 0;
  if (name == "churn") {
    ms = timeCopies<Churn>(threads, scale);
  } else if (name == "tiny") {
    ms = timeCopies<Tiny>(threads, scale);
  } else if (name == "server") {
    ServerSide sides[2] = {ServerSide(101, scale), ServerSide(202, scale)};
    const auto t0 = std::chrono::steady_clock::now();
    threads == 2 ? serverTwoThreads(sides) : serverOneThread(sides);
    ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  } else if (name == "grow-shrink") {
    GrowShrink g(threads, scale);
    const auto t0 = std::chrono::steady_clock::now();
    g.run();
    ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  } else {
    die(2, "unknown workload (churn, server, grow-shrink, tiny)");
  }

  Dl_info info{};
  void* sym = ::dlsym(RTLD_DEFAULT, "malloc");
  const char* from = sym != nullptr && ::dladdr(sym, &info) != 0 && info.dli_fname != nullptr
                         ? info.dli_fname
                         : "?";
  std::printf("time_ms %.3f\nmalloc %s\n", ms, from);
  return 0;
}
