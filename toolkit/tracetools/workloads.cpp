// The bundled workloads (workloads.hpp): deterministic generators that write traces shaped
// like real programs (three that `strata compare` runs, and one long-running one), described with their parameters in docs/toolkit/workloads.md.
// Determinism: every random choice comes from one splitmix64 stream seeded by the seed and
// the workload's name, the clock is simulated, and no std:: distribution (whose results differ
// between library versions) is used, so a name, seed and size always give the same bytes.
#include "tracetools/workloads.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <utility>
#include <vector>

#include "tracetools/trace_file.hpp"
#include "support/error.hpp"

namespace strata::tracetools {
namespace {

using trace::Event;
using trace::Op;

constexpr WorkloadInfo kWorkloads[] = {
    {"web-proxy",
     "web proxy cache: fixed live memory of heavy-tailed objects replaced at random, plus "
     "per-request buffers"},
    {"editor",
     "editor: lines edited by realloc, accumulating undo records, file loads grown by realloc; "
     "live memory keeps growing"},
    {"server",
     "4-thread server: long-lived sessions, per-request scratch bursts, requests and responses "
     "handed between threads"},
    // Long-running: live memory that stays fixed however long the program runs.
    {"steady",
     "long-running cache: 4,096 live objects of 16 B-4 KiB, one replaced at random per step, "
     "with a scratch buffer; live memory stays the same at every size"},
};

// The first three are the ones `strata compare` runs by default.
constexpr std::size_t kComparedWorkloads = 3;

// splitmix64: a small, fast, well-mixed 64-bit generator whose sequence depends on nothing
// but its seed (unlike std:: distributions).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) (n > 0); the modulo bias is negligible for the small n used here.
  std::uint64_t below(std::uint64_t n) { return next() % n; }
  // Uniform in [lo, hi].
  std::uint64_t between(std::uint64_t lo, std::uint64_t hi) { return lo + below(hi - lo + 1); }
  // Uniform in [0, 1).
  double real() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  bool chance(double p) { return real() < p; }
  // Log-uniform in [lo, hi]: as many objects in 1-2 KiB as in 16-32 KiB.
  std::uint64_t logUniform(std::uint64_t lo, std::uint64_t hi) {
    const double v = static_cast<double>(lo) *
                     std::exp(real() * std::log(static_cast<double>(hi) / static_cast<double>(lo)));
    return std::clamp(static_cast<std::uint64_t>(v), lo, hi);
  }

 private:
  std::uint64_t state_;
};

// The seed of a workload's stream: the user's seed mixed with the name (FNV-1a), so that two
// workloads run with the same seed do not share choices.
std::uint64_t streamSeed(std::string_view name, std::uint64_t seed) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : name) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return h ^ (seed * 0x9E3779B97F4A7C15ull);
}

// Writes events to a trace file with a simulated clock: each event is 20-299 ns after the
// previous one (plus any idle time a generator adds). Throws support::Error naming the
// path when the file cannot be created or written.
class Emitter {
 public:
  Emitter(const std::string& path, std::uint64_t seed, ChunkCompression compression)
      : file_(path, WithSites::No, compression), clock_(seed) {}

  // An allocation of `size` bytes by `op` (malloc, calloc, new) on `thread`; returns its id.
  std::uint64_t alloc(std::uint32_t thread, std::uint64_t size, Op op = Op::Malloc) {
    Event e;
    e.op = op;
    e.thread = thread;
    e.size = size;
    return append(e);
  }
  // realloc(old, size) on `thread`; returns the new object's id.
  std::uint64_t realloc(std::uint32_t thread, std::uint64_t old, std::uint64_t size) {
    Event e;
    e.op = Op::Realloc;
    e.thread = thread;
    e.target = old;
    e.size = size;
    return append(e);
  }
  // free (or delete, with op Delete) of object `id` on `thread`.
  void release(std::uint32_t thread, std::uint64_t id, Op op = Op::Free) {
    Event e;
    e.op = op;
    e.thread = thread;
    e.object = id;
    append(e);
  }
  // Time passing with no allocation (computation, waiting for the network).
  void idle(std::uint64_t ns) { now_ += ns; }

  std::uint64_t events() const { return file_.events(); }
  // Writes the trailer and closes the file.
  void finish() { file_.finish(); }

 private:
  std::uint64_t append(Event& e) {
    now_ += 20 + clock_.below(280);
    e.timeNs = now_;
    return file_.append(e);
  }

  TraceFile file_;
  Rng clock_;
  std::uint64_t now_ = 0;
};

// One live object of a generator: its id and requested size.
struct Obj {
  std::uint64_t id;
  std::uint64_t size;
};

// Removes v[i] in O(1) (order does not matter to the generators).
template <class T>
T takeAt(std::vector<T>& v, std::size_t i) {
  T x = v[i];
  v[i] = v.back();
  v.pop_back();
  return x;
}

// Web-proxy cache (Hummingbird, "Are Mallocs Free of Fragmentation?"): a memory cache holding
// a fixed total of live bytes (48 MiB x size) in objects of heavy-tailed sizes, a new object
// evicting random entries until it fits, and each request's short-lived buffers. One thread.
void webProxy(Emitter& em, Rng& rng, double size, std::uint64_t targetEvents) {
  const auto capacity = std::max<std::uint64_t>(
      std::uint64_t{1} << 18, static_cast<std::uint64_t>(48.0 * 1048576.0 * size));
  const std::uint64_t maxObject = std::min<std::uint64_t>(std::uint64_t{1} << 20, capacity / 8);
  // Object sizes: 55% small (headers, small pages), 35% log-uniform 2-64 KiB pages and
  // images, 10% a Pareto tail (alpha 1.2) from 64 KiB up to 1 MiB.
  auto objectSize = [&]() -> std::uint64_t {
    const double r = rng.real();
    std::uint64_t s;
    if (r < 0.55) s = rng.between(200, 2047);
    else if (r < 0.90) s = rng.logUniform(2048, 65536);
    else s = static_cast<std::uint64_t>(65536.0 / std::pow(1.0 - rng.real(), 1.0 / 1.2));
    return std::min(s, maxObject);
  };
  std::vector<Obj> cache;
  std::uint64_t cached = 0;
  auto insert = [&](std::uint64_t s) {
    while (!cache.empty() && cached + s > capacity) {
      const Obj victim = takeAt(cache, static_cast<std::size_t>(rng.below(cache.size())));
      em.release(0, victim.id);
      cached -= victim.size;
    }
    cache.push_back({em.alloc(0, s), s});
    cached += s;
  };
  // Warm-up: the cache fills from empty.
  while (cached < capacity && em.events() < targetEvents) insert(objectSize());
  std::vector<std::uint64_t> scratch;
  while (em.events() < targetEvents) {
    // A request: its buffer and parsed header strings, then, on a miss (25%), a response
    // buffer and the new cache entry; all of the request's own memory is freed at its end.
    scratch.clear();
    scratch.push_back(em.alloc(0, rng.logUniform(512, 8192)));
    const std::uint64_t headers = rng.between(3, 8);
    for (std::uint64_t i = 0; i < headers; ++i) scratch.push_back(em.alloc(0, rng.between(16, 256)));
    if (rng.chance(0.25)) {
      scratch.push_back(em.alloc(0, rng.logUniform(4096, 16384)));
      insert(objectSize());
    }
    for (std::size_t i = scratch.size(); i-- > 0;) em.release(0, scratch[i]);
    em.idle(rng.between(1000, 20000));
  }
}

// Steady: a long-running cache whose live set is the same however many events it makes (the
// proxy cache of the fragmentation study, run for hours): 4,096 objects of log-uniform sizes
// from 16 B to 4 KiB, and per step one evicted at random and its replacement allocated, with a
// short-lived scratch buffer (64 B-1 KiB) every fourth step. The size scales only the length.
void steady(Emitter& em, Rng& rng, std::uint64_t targetEvents) {
  constexpr std::size_t kLive = 4096;
  std::vector<std::uint64_t> cache;
  cache.reserve(kLive);
  while (cache.size() < kLive && em.events() < targetEvents)
    cache.push_back(em.alloc(0, rng.logUniform(16, 4096)));
  for (std::uint64_t step = 0; em.events() < targetEvents; ++step) {
    const std::size_t victim = static_cast<std::size_t>(rng.below(cache.size()));
    em.release(0, cache[victim]);
    cache[victim] = em.alloc(0, rng.logUniform(16, 4096));
    if (step % 4 == 0) em.release(0, em.alloc(0, rng.logUniform(64, 1024)));
    em.idle(rng.between(100, 2000));
  }
}

// Editor: a document of lines (small strings) edited in place by realloc, an undo history of
// C++ objects that is never trimmed, search scratch, and occasional file loads read into a
// buffer grown by realloc and split into lines. Frees are few: live memory keeps growing.
void editor(Emitter& em, Rng& rng, std::uint64_t targetEvents) {
  std::vector<Obj> lines;
  auto newLine = [&](std::uint64_t s) { lines.push_back({em.alloc(0, s), s}); };
  auto undo = [&](std::uint64_t s) { em.alloc(0, s, Op::New); };
  // A file load: read into a buffer doubled by realloc until the file fits, split into lines
  // of 8-120 bytes; the buffer is freed, or kept (as the saved copy) half the time.
  auto loadFile = [&](std::uint64_t fileBytes) {
    std::uint64_t cap = 65536;
    std::uint64_t buffer = em.alloc(0, cap);
    while (cap < fileBytes) {
      cap *= 2;
      buffer = em.realloc(0, buffer, cap);
    }
    for (std::uint64_t done = 0; done < fileBytes && em.events() < targetEvents;) {
      const std::uint64_t s = rng.between(8, 120);
      newLine(s);
      done += s;
    }
    if (rng.chance(0.5)) em.release(0, buffer);
  };
  loadFile(16384);
  // About one file load per 60 000 events; the first one a tenth of the way in.
  const std::uint64_t loadEvery = 60000;
  std::uint64_t nextLoad = std::min<std::uint64_t>(targetEvents / 10, loadEvery);
  while (em.events() < targetEvents) {
    if (em.events() >= nextLoad) {
      loadFile(rng.logUniform(16384, 524288));
      nextLoad += loadEvery;
      continue;
    }
    const double r = rng.real();
    if (r < 0.55 && !lines.empty()) {
      // Edit a line: it grows by a few characters (shrinks 15% of the time).
      Obj& line = lines[static_cast<std::size_t>(rng.below(lines.size()))];
      const std::uint64_t s = rng.chance(0.15) ? std::max<std::uint64_t>(8, line.size - rng.between(1, 8))
                                               : line.size + rng.between(1, 16);
      line = {em.realloc(0, line.id, s), s};
      undo(rng.between(24, 96));
    } else if (r < 0.75) {
      newLine(rng.between(8, 120));
      undo(rng.between(24, 96));
    } else if (r < 0.80 && !lines.empty()) {
      // Delete a line: its text moves into the undo record.
      const Obj line = takeAt(lines, static_cast<std::size_t>(rng.below(lines.size())));
      em.release(0, line.id);
      undo(24 + line.size);
    } else {
      // Search or reformat: a scratch buffer that lives for one command.
      const std::uint64_t id = em.alloc(0, rng.logUniform(64, 4096));
      em.release(0, id);
    }
    em.idle(rng.between(200, 5000));
  }
}

// One step of a server worker's script for the request it is handling.
struct Step {
  enum Kind : std::uint8_t { Alloc, Grow, Free, FreeRequest, Respond } kind;
  std::uint32_t slot = 0;    // index into the worker's scratch ids
  std::uint64_t size = 0;
};

// A server worker thread: the request it handles and what is left of its script.
struct Worker {
  std::uint32_t thread = 0;
  std::uint64_t request = 0;
  std::vector<Step> script;
  std::size_t next = 0;
  std::vector<std::uint64_t> scratch;
  bool busy = false;
};

// The script of one request: ~20 scratch allocations (90% 16-512 B, 10% 1-16 KiB), a string
// builder doubled by realloc 0-3 times, then every scratch object freed in random order,
// the request freed, and the response allocated and queued.
void makeScript(Worker& w, Rng& rng) {
  w.script.clear();
  w.next = 0;
  const auto n = static_cast<std::uint32_t>(rng.between(8, 32));
  w.scratch.assign(n + 1, 0);
  for (std::uint32_t i = 0; i < n; ++i)
    w.script.push_back({Step::Alloc, i,
                        rng.chance(0.9) ? rng.between(16, 512) : rng.logUniform(1024, 16384)});
  std::uint64_t builder = 256;
  w.script.push_back({Step::Alloc, n, builder});
  for (auto grows = rng.below(4); grows > 0; --grows) w.script.push_back({Step::Grow, n, builder *= 2});
  std::vector<std::uint32_t> order(n + 1);
  for (std::uint32_t i = 0; i <= n; ++i) order[i] = i;
  for (std::uint32_t i = n; i > 0; --i)
    std::swap(order[i], order[static_cast<std::size_t>(rng.below(i + 1))]);
  for (const std::uint32_t i : order) w.script.push_back({Step::Free, i, 0});
  w.script.push_back({Step::FreeRequest, 0, 0});
  w.script.push_back({Step::Respond, 0, rng.logUniform(1024, 16384)});
}

// The worker's next step of its request's script; the response, at the end, is queued.
void runStep(Emitter& em, Worker& w, std::deque<std::uint64_t>& responses) {
  const Step& s = w.script[w.next++];
  switch (s.kind) {
    case Step::Alloc: w.scratch[s.slot] = em.alloc(w.thread, s.size); break;
    case Step::Grow: w.scratch[s.slot] = em.realloc(w.thread, w.scratch[s.slot], s.size); break;
    case Step::Free: em.release(w.thread, w.scratch[s.slot]); break;
    case Step::FreeRequest: em.release(w.thread, w.request); break;
    case Step::Respond:
      responses.push_back(em.alloc(w.thread, s.size));
      w.busy = false;
      break;
  }
}

// Server: thread 0 accepts connections (long-lived session state, some sessions closing and
// opening) and allocates each request, which a worker (threads 1-3) takes from a queue; the
// worker allocates a burst of small and medium scratch (and a string builder grown by
// realloc), frees it all at the end of the request, frees the request (allocated by thread 0)
// and hands a response back to thread 0, which frees it once sent. Threads interleave at
// random, event by event, as concurrent threads do.
void server(Emitter& em, Rng& rng, double size, std::uint64_t targetEvents) {
  constexpr std::uint32_t kWorkers = 3;
  struct Session {
    std::uint64_t state, name;
  };
  std::vector<Session> sessions;
  auto openSession = [&]() {
    sessions.push_back({em.alloc(0, rng.logUniform(1024, 8192), Op::New),
                        em.alloc(0, rng.between(32, 128))});
  };
  auto closeSession = [&]() {
    const Session s = takeAt(sessions, static_cast<std::size_t>(rng.below(sessions.size())));
    em.release(0, s.name);
    em.release(0, s.state, Op::Delete);
  };
  const auto sessionCount = std::max<std::uint64_t>(16, static_cast<std::uint64_t>(2000 * size));
  for (std::uint64_t i = 0; i < sessionCount && em.events() < targetEvents; ++i) openSession();

  std::deque<std::uint64_t> requests;   // allocated by thread 0, waiting for a worker
  std::deque<std::uint64_t> responses;  // allocated by a worker, waiting to be sent and freed
  std::vector<Worker> workers(kWorkers);
  for (std::uint32_t w = 0; w < kWorkers; ++w) workers[w].thread = w + 1;

  while (em.events() < targetEvents) {
    const auto actor = static_cast<std::uint32_t>(rng.below(kWorkers + 1));
    if (actor == 0) {
      // Thread 0: send (free) a response, accept a request, or let a session go and a new
      // one come.
      if (!responses.empty() && rng.chance(0.5)) {
        em.release(0, responses.front());
        responses.pop_front();
      } else if (requests.size() < 2 * kWorkers) {
        requests.push_back(em.alloc(0, rng.logUniform(512, 4096)));
      } else if (rng.chance(0.05)) {
        if (!sessions.empty()) closeSession();
        openSession();
      }
      continue;
    }
    Worker& w = workers[actor - 1];
    if (!w.busy) {
      if (requests.empty()) continue;
      w.request = requests.front();
      requests.pop_front();
      makeScript(w, rng);
      w.busy = true;
      continue;
    }
    runStep(em, w, responses);
  }
}

}  // namespace

std::span<const WorkloadInfo> bundledWorkloads() {
  return std::span<const WorkloadInfo>(kWorkloads).first(kComparedWorkloads);
}

std::span<const WorkloadInfo> allWorkloads() { return kWorkloads; }

const WorkloadInfo* findWorkload(std::string_view name) {
  for (const WorkloadInfo& w : kWorkloads)
    if (w.name == name) return &w;
  return nullptr;
}

std::uint64_t generateWorkloadEvents(std::string_view name, std::uint64_t seed, double size,
                                     const std::string& path, ChunkCompression compression) {
  const WorkloadInfo* info = findWorkload(name);
  if (info == nullptr) {
    std::string known;
    for (const WorkloadInfo& w : kWorkloads) known += (known.empty() ? "" : ", ") + std::string(w.name);
    throw support::UsageError("unknown workload '" + std::string(name) + "'; known workloads: " + known);
  }
  if (!(size > 0) || size > 1000)
    throw support::UsageError("workload size must be above 0 and at most 1000");
  const auto target = std::max<std::uint64_t>(1000, static_cast<std::uint64_t>(std::llround(size * 1e6)));
  Rng rng(streamSeed(name, seed));
  Emitter em(path, rng.next(), compression);
  if (name == "web-proxy") webProxy(em, rng, size, target);
  else if (name == "editor") editor(em, rng, target);
  else if (name == "steady") steady(em, rng, target);
  else server(em, rng, size, target);
  const std::uint64_t events = em.events();
  em.finish();
  return events;
}

void generateWorkload(std::string_view name, std::uint64_t seed, double size,
                      const std::string& path, ChunkCompression compression) {
  generateWorkloadEvents(name, seed, size, path, compression);
}

}  // namespace strata::tracetools
