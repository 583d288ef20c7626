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
// allocation failing exits 4, a bad command line exits 2.
#include <dlfcn.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

// A small fast generator (splitmix64): deterministic per seed, nothing allocated.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n).
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
  // Log-uniform in [lo, hi].
  std::size_t logUniform(std::size_t lo, std::size_t hi) {
    const double u = static_cast<double>(next() >> 11) / 9007199254740992.0;
    const double v = std::exp(std::log(static_cast<double>(lo)) +
                              u * (std::log(static_cast<double>(hi) + 1) - std::log(lo)));
    return std::min(hi, static_cast<std::size_t>(v));
  }
  // A nonzero byte to fill an object with.
  std::uint8_t tag() { return static_cast<std::uint8_t>(1 + next() % 255); }

 private:
  std::uint64_t s_;
};

// A table of sizes drawn before the clock starts (logUniform costs an exp and a log, more
// than some of the allocations it sizes), replayed cyclically.
class Sizes {
 public:
  template <class Draw>
  Sizes(Rng& rng, Draw draw) : table_(kCount) {
    for (auto& s : table_) s = static_cast<std::uint32_t>(draw(rng));
  }
  std::size_t next() { return table_[i_++ & (kCount - 1)]; }

 private:
  static constexpr std::size_t kCount = 1 << 16;
  std::vector<std::uint32_t> table_;
  std::size_t i_ = 0;
};

// One live object: where, how big, and the byte it was filled with.
struct Object {
  unsigned char* p = nullptr;
  std::uint32_t n = 0;
  std::uint8_t tag = 0;
};

// Keeps the compiler from pairing a malloc with its free and removing both.
inline void escape(void* p) { asm volatile("" : : "r"(p) : "memory"); }

// Reports what went wrong and ends the process with `code` (no destructors, no frees).
[[noreturn]] void die(int code, const char* what) {
  std::fprintf(stderr, "preload_workload: %s\n", what);
  std::fflush(stderr);
  std::_Exit(code);
}

// Allocates n bytes and fills them with the tag: the bytes a program would write.
Object make(std::size_t n, std::uint8_t tag) {
  auto* p = static_cast<unsigned char*>(std::malloc(n));
  if (p == nullptr) die(4, "malloc returned NULL");
  escape(p);
  std::memset(p, tag, n);
  return {p, static_cast<std::uint32_t>(n), tag};
}

// Checks that every byte still holds the tag, a word at a time (the loop vectorises);
// exits with status 3 if one does not.
void check(const Object& o) {
  const std::uint64_t word = 0x0101010101010101ull * o.tag;
  std::uint64_t diff = 0;
  std::size_t i = 0;
  for (; i + 8 <= o.n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, o.p + i, 8);
    diff |= w ^ word;
  }
  for (; i < o.n; ++i) diff |= o.p[i] ^ o.tag;
  if (diff != 0) die(3, "an object's contents changed while it was live");
}

// What a program does with an object at the end of its life: reads it, then frees it.
void checkAndFree(const Object& o) {
  check(o);
  std::free(o.p);
}

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

// ---- server ---------------------------------------------------------------------------

// A single-producer single-consumer ring of requests (fixed array, no allocation).
class Ring {
 public:
  bool push(const Object& o) {
    const std::size_t t = tail_.load(std::memory_order_relaxed);
    if (t - head_.load(std::memory_order_acquire) == kCap) return false;
    slots_[t & (kCap - 1)] = o;
    tail_.store(t + 1, std::memory_order_release);
    return true;
  }
  bool pop(Object& o) {
    const std::size_t h = head_.load(std::memory_order_relaxed);
    if (h == tail_.load(std::memory_order_acquire)) return false;
    o = slots_[h & (kCap - 1)];
    head_.store(h + 1, std::memory_order_release);
    return true;
  }

 private:
  static constexpr std::size_t kCap = 1024;
  Object slots_[kCap];
  alignas(64) std::atomic<std::size_t> head_{0};
  alignas(64) std::atomic<std::size_t> tail_{0};
};

// One side of the server: its request sizes, scratch sizes and number of requests.
struct ServerSide {
  Rng rng;
  Sizes requests, scratch;
  std::size_t count;
  ServerSide(std::uint64_t seed, double scale)
      : rng(seed),
        requests(rng, [](Rng& r) {
          return r.below(16) == 0 ? r.logUniform(4096, 32768) : r.logUniform(32, 1024);
        }),
        scratch(rng, [](Rng& r) { return r.logUniform(64, 256); }),
        count(static_cast<std::size_t>(1000000 * scale)) {}

  // Builds one request: a short-lived scratch object used and dropped while building it.
  Object request() {
    const Object tmp = make(scratch.next(), rng.tag());
    const Object r = make(requests.next(), static_cast<std::uint8_t>(tmp.tag % 255 + 1));
    checkAndFree(tmp);
    return r;
  }
};

// Two threads: each sends `count` requests to the other and frees the other's requests.
// A thread whose outgoing ring is full serves its incoming ring meanwhile, so neither waits
// for the other forever.
void serverTwoThreads(ServerSide (&sides)[2]) {
  static Ring rings[2];
  auto body = [&](int me) {
    ServerSide& s = sides[me];
    Ring& out = rings[me];
    Ring& in = rings[1 - me];
    const std::size_t expected = sides[1 - me].count;
    std::size_t received = 0;
    Object o;
    auto serve = [&] {
      bool any = false;
      while (in.pop(o)) {
        checkAndFree(o);
        ++received;
        any = true;
      }
      return any;
    };
    for (std::size_t i = 0; i < s.count; ++i) {
      const Object r = s.request();
      while (!out.push(r))
        if (!serve()) sched_yield();
      if ((i & 15) == 15) serve();
    }
    while (received < expected)
      if (!serve()) sched_yield();
  };
  std::thread other(body, 1);
  body(0);
  other.join();
}

// One thread: the requests of both sides go through one FIFO of the same depth, each
// freed when the FIFO is full (oldest first).
void serverOneThread(ServerSide (&sides)[2]) {
  static Ring ring;
  Object o;
  for (ServerSide& s : sides) {
    for (std::size_t i = 0; i < s.count; ++i) {
      const Object r = s.request();
      if (!ring.push(r)) {
        ring.pop(o);
        checkAndFree(o);
        ring.push(r);
      }
    }
  }
  while (ring.pop(o)) checkAndFree(o);
}

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

}  // namespace

int main(int argc, char** argv) {
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
