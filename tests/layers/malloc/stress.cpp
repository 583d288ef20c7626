// Multi-threaded malloc stress program, linked against libc only so that LD_PRELOAD decides
// which allocator it runs on.
//
// Worker threads (4 by default) share 10 million operations: allocations of random sizes
// (mostly up to 256 bytes, some up to 64 KiB, a few up to 1 MiB) by malloc, calloc, realloc,
// posix_memalign, aligned_alloc, memalign and operator new (plain and aligned); frees;
// reallocs that grow and shrink; and hand-offs through per-thread queues, so that a good part
// of all objects is freed (or reallocated) by a thread other than the one that allocated it.
// Meanwhile a churner thread keeps starting short-lived threads that allocate, free some,
// hand the rest to the workers and exit, so that memory of exited threads is freed by live
// ones and a thread's exit must give its caches back.
//
// Every object is filled with a pattern derived from its id and checked in full before it is
// freed, after each realloc (the preserved prefix), and when it changes threads; alignment,
// malloc_usable_size >= request and calloc's zeroing are checked too. The program exits 0
// only if every check passed, and prints one summary line.
//
// Usage: malloc_stress [--ops N] [--threads T] [--seed S] [--expect-lib NAME]
//                      [--check-only] [--all-symbols] [--max-rss-mib M]
// --expect-lib NAME: fail unless malloc, free, ... resolve (dlsym(RTLD_DEFAULT) + dladdr) to
// a library whose path contains NAME; --all-symbols extends the check to every entry point
// a Strata drop-in library exports; --check-only stops after that check. --max-rss-mib M:
// fail if the peak resident set exceeds M MiB (memory of exited threads never reused, or
// freed memory never reused, shows up there).
#include <dlfcn.h>
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "rng.hpp"

namespace {

using strata_malloc_test::Rng;

// splitmix64 finaliser: turns an object id into the seed of its byte pattern.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The pattern: 8-byte word k of an object with seed s is s ^ (k * odd constant), stored little
// endian; so any byte's expected value depends only on the object's id and its offset.
std::uint64_t patWord(std::uint64_t seed, std::size_t k) {
  return seed ^ (k * 0xD6E8FEB86659FD93ull);
}
unsigned char patByte(std::uint64_t seed, std::size_t i) {
  return static_cast<unsigned char>(patWord(seed, i >> 3) >> ((i & 7) * 8));
}

// Writes the pattern over bytes [a, b) of p; a word store per 8 bytes.
void fillRange(unsigned char* p, std::uint64_t seed, std::size_t a, std::size_t b) {
  std::size_t i = a;
  for (; i < b && (i & 7) != 0; ++i) p[i] = patByte(seed, i);
  for (; i + 8 <= b; i += 8) {
    std::uint64_t w = patWord(seed, i >> 3);
    std::memcpy(p + i, &w, 8);
  }
  for (; i < b; ++i) p[i] = patByte(seed, i);
}

// Returns the first offset in [a, b) whose byte differs from the pattern, or b if none: a word
// load and xor per 8 bytes, the exact offset searched only after a difference was seen.
std::size_t checkRange(const unsigned char* p, std::uint64_t seed, std::size_t a, std::size_t b) {
  std::size_t i = a;
  for (; i < b && (i & 7) != 0; ++i)
    if (p[i] != patByte(seed, i)) return i;
  std::uint64_t diff = 0;
  std::size_t words = i;
  for (; i + 8 <= b; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    diff |= w ^ patWord(seed, i >> 3);
  }
  if (diff != 0) {
    for (std::size_t j = words; j < i; ++j)
      if (p[j] != patByte(seed, j)) return j;
  }
  for (; i < b; ++i)
    if (p[i] != patByte(seed, i)) return i;
  return b;
}

// How an object was allocated, which decides how it is freed.
enum class Kind : std::uint8_t { Malloc, New, NewAligned };

// One live object: pointer, requested size, id (thread number in the top bits, a counter
// below), the alignment it was asked for (0 = default) and its kind.
struct Obj {
  unsigned char* p = nullptr;
  std::size_t size = 0;
  std::uint64_t id = 0;
  std::size_t align = 0;
  Kind kind = Kind::Malloc;
};

std::atomic<long> gFailures{0};
std::atomic<long> gOps{0};
std::atomic<long> gCrossFrees{0};
std::atomic<long> gEphemeralThreads{0};

// Records a failed check; the first 20 are printed with their details.
void fail(const char* what, const Obj& o, std::size_t offset) {
  long n = gFailures.fetch_add(1) + 1;
  if (n <= 20)
    std::fprintf(stderr,
                 "stress: CHECK FAILED: %s (id=%llx size=%zu align=%zu kind=%d p=%p offset=%zu)\n",
                 what, static_cast<unsigned long long>(o.id), o.size, o.align,
                 static_cast<int>(o.kind), static_cast<void*>(o.p), offset);
}

// The alignment every malloc result of n bytes must have: 16 bytes, or the largest power of
// two not above n for smaller requests (an 8-byte object may be 8-aligned).
std::size_t defaultAlign(std::size_t n) {
  if (n >= 16) return 16;
  std::size_t a = 1;
  while (a * 2 <= n) a *= 2;
  return a;
}

// A random request size: 0.05% zero, ~94% 1..256 bytes, ~6% log-uniform up to 64 KiB,
// 0.1% log-uniform up to 1 MiB.
std::size_t pickSize(Rng& r) {
  std::uint64_t x = r.below(10000);
  if (x < 5) return 0;
  if (x < 9400) return 1 + r.below(256);
  if (x < 9990) {
    unsigned bits = 8 + static_cast<unsigned>(r.below(8));  // 257 .. 64 Ki
    return (std::size_t{1} << bits) + r.below(std::size_t{1} << bits) + 1;
  }
  unsigned bits = 16 + static_cast<unsigned>(r.below(4));  // 64 Ki + 1 .. 1 Mi
  return (std::size_t{1} << bits) + r.below(std::size_t{1} << bits) + 1;
}

// A random alignment for the aligned allocation calls: mostly 16..4096, rarely up to 2 MiB.
std::size_t pickAlign(Rng& r) {
  if (r.below(200) == 0) return std::size_t{1} << (16 + r.below(6));
  return std::size_t{16} << r.below(9);
}

// Checks o's alignment and, for malloc-family objects, its usable size.
void checkPlacement(const Obj& o, const char* where) {
  std::size_t want = o.align != 0 ? o.align : defaultAlign(o.size);
  if (reinterpret_cast<std::uintptr_t>(o.p) % want != 0) fail(where, o, 0);
  if (o.kind == Kind::Malloc && malloc_usable_size(o.p) < o.size)
    fail("malloc_usable_size < request", o, 0);
}

// Allocates a new object with a random call, checks placement (and calloc's zeroes) and fills
// it. Returns false (and records a failure) if the allocator returned nullptr.
bool allocate(Rng& r, std::uint64_t id, Obj& o) {
  o = Obj{};
  o.id = id;
  o.size = pickSize(r);
  std::uint64_t how = r.below(100);
  void* p = nullptr;
  bool zeroed = false;
  if (how < 55) {
    p = std::malloc(o.size);
  } else if (how < 65) {
    std::size_t n = 1 + r.below(8);
    std::size_t each = o.size / n;
    o.size = each * n;
    p = std::calloc(n, each);
    zeroed = true;
  } else if (how < 70) {
    p = std::realloc(nullptr, o.size);
  } else if (how < 78) {
    // Aligned requests are never 0 bytes: what an aligned 0-byte request returns is
    // implementation-defined (jemalloc 5.3 returns misaligned pointers), and the conformance
    // test owns that corner.
    o.size += o.size == 0 ? 1 : 0;
    o.align = pickAlign(r);
    if (posix_memalign(&p, o.align, o.size) != 0) p = nullptr;
  } else if (how < 86) {
    // aligned_alloc gets a size that is a multiple of the alignment, as C11 required (and
    // ASan still enforces); a swapped argument order then mostly asks for a non-power-of-two
    // alignment and fails.
    o.align = pickAlign(r);
    o.size = (o.size + o.align) & ~(o.align - 1);
    p = std::aligned_alloc(o.align, o.size);
  } else if (how < 90) {
    o.size += o.size == 0 ? 1 : 0;
    o.align = pickAlign(r);
    p = memalign(o.align, o.size);
  } else if (how < 96) {
    o.kind = Kind::New;
    p = ::operator new(o.size, std::nothrow);
  } else {
    o.kind = Kind::NewAligned;
    o.size += o.size == 0 ? 1 : 0;
    o.align = pickAlign(r);
    p = ::operator new (o.size, std::align_val_t{o.align}, std::nothrow);
  }
  o.p = static_cast<unsigned char*>(p);
  if (p == nullptr) {
    fail("allocation returned nullptr", o, 0);
    return false;
  }
  checkPlacement(o, "misaligned allocation");
  if (zeroed) {
    for (std::size_t i = 0; i < o.size; ++i)
      if (o.p[i] != 0) {
        fail("calloc memory not zero", o, i);
        break;
      }
  }
  fillRange(o.p, mix(o.id), 0, o.size);
  return true;
}

// Checks every byte of o's pattern.
void checkAll(const Obj& o, const char* where) {
  std::size_t bad = checkRange(o.p, mix(o.id), 0, o.size);
  if (bad != o.size) fail(where, o, bad);
}

// Checks o in full and frees it with the call matching its allocation.
void release(Obj& o) {
  checkAll(o, "pattern corrupted before free");
  switch (o.kind) {
    case Kind::Malloc:
      std::free(o.p);
      break;
    case Kind::New:
      ::operator delete(o.p, o.size);
      break;
    case Kind::NewAligned:
      ::operator delete (o.p, o.size, std::align_val_t{o.align});
      break;
  }
  o.p = nullptr;
}

// Reallocates a malloc-family object to a new size (often a small grow or a shrink, to reach
// in-place paths), checks the preserved prefix and fills any new tail.
void reallocate(Rng& r, Obj& o) {
  std::size_t n;
  std::uint64_t how = r.below(4);
  if (how == 0)
    n = o.size + 1 + r.below(64);
  else if (how == 1)
    n = o.size / 2 + 1;
  else
    n = pickSize(r) + 1;
  checkAll(o, "pattern corrupted before realloc");
  void* q = std::realloc(o.p, n);
  if (q == nullptr) {
    fail("realloc returned nullptr", o, n);
    return;  // the old block is still valid and still holds the pattern
  }
  std::size_t keep = n < o.size ? n : o.size;
  Obj moved = o;
  moved.p = static_cast<unsigned char*>(q);
  moved.size = n;
  moved.align = 0;
  std::size_t bad = checkRange(moved.p, mix(o.id), 0, keep);
  if (bad != keep) fail("realloc lost content", moved, bad);
  fillRange(moved.p, mix(o.id), keep, n);
  checkPlacement(moved, "misaligned realloc");
  o = moved;
}

// A thread's inbox: objects other threads hand over for it to check and free (or adopt).
struct Inbox {
  std::mutex m;
  std::vector<Obj> q;
};

constexpr std::size_t kSlots = 4096;
constexpr std::size_t kInboxLimit = 1 << 16;

// Hands o to thread `to`'s inbox; frees it here instead if that inbox is full.
void handOff(std::vector<Inbox>& inboxes, std::size_t to, Obj& o) {
  {
    std::lock_guard<std::mutex> lock(inboxes[to].m);
    if (inboxes[to].q.size() < kInboxLimit) {
      inboxes[to].q.push_back(o);
      o.p = nullptr;
      return;
    }
  }
  release(o);
}

// One worker: `ops` random operations on its own slot table, handing objects to the others
// and consuming its inbox every 64 operations.
void worker(std::size_t self, std::size_t nthreads, long ops, std::uint64_t seed,
            std::vector<Inbox>& inboxes) {
  Rng r(seed * 1000003 + self);
  std::vector<Obj> slots(kSlots);
  std::vector<Obj> received;
  std::uint64_t counter = 0;
  const std::uint64_t idBase = static_cast<std::uint64_t>(self + 1) << 40;
  long done = 0;
  long cross = 0;
  while (done < ops) {
    if ((done & 63) == 0) {
      {
        std::lock_guard<std::mutex> lock(inboxes[self].m);
        received.swap(inboxes[self].q);
      }
      for (Obj& o : received) {
        checkAll(o, "pattern corrupted in hand-off");
        Obj& slot = slots[r.below(kSlots)];
        if (slot.p == nullptr && r.below(3) == 0) {
          slot = o;  // adopt: later freed or reallocated by this thread
        } else {
          release(o);
        }
        ++cross;
        ++done;
      }
      received.clear();
    }
    Obj& o = slots[r.below(kSlots)];
    ++done;
    if (o.p == nullptr) {
      allocate(r, idBase | counter++, o);
      continue;
    }
    std::uint64_t act = r.below(100);
    if (act < 50 || (act < 75 && nthreads < 2)) {
      release(o);
    } else if (act < 75) {
      std::size_t to = (self + 1 + r.below(nthreads - 1)) % nthreads;
      handOff(inboxes, to, o);
    } else if (act < 95 && o.kind == Kind::Malloc) {
      reallocate(r, o);
    } else {
      checkAll(o, "pattern corrupted while live");
    }
  }
  for (Obj& o : slots)
    if (o.p != nullptr) release(o);
  gOps.fetch_add(done);
  gCrossFrees.fetch_add(cross);
}

// One short-lived thread: allocates 256 objects, frees half of them, hands the rest to the
// workers, and exits (its caches must go back to the allocator).
void ephemeral(std::uint64_t number, std::size_t nworkers, std::vector<Inbox>& inboxes) {
  Rng r(number * 7919 + 17);
  const std::uint64_t idBase = (std::uint64_t{1} << 62) | (number << 20);
  std::vector<Obj> objs(256);
  long ops = 0;
  for (std::size_t i = 0; i < objs.size(); ++i) {
    allocate(r, idBase | i, objs[i]);
    ++ops;
  }
  for (std::size_t i = 0; i < objs.size(); ++i) {
    if (objs[i].p == nullptr) continue;
    if (i % 2 == 0)
      release(objs[i]);
    else
      handOff(inboxes, r.below(nworkers), objs[i]);
    ++ops;
  }
  gOps.fetch_add(ops);
}

// The churner: keeps two short-lived threads running until the workers are done.
void churner(std::size_t nworkers, std::vector<Inbox>& inboxes, const std::atomic<bool>& stop) {
  std::uint64_t number = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    std::thread a(ephemeral, number++, nworkers, std::ref(inboxes));
    std::thread b(ephemeral, number++, nworkers, std::ref(inboxes));
    a.join();
    b.join();
    gEphemeralThreads.fetch_add(2);
  }
}

// One entry point to check: its symbol name and whether glibc's libc defines it too.
struct Entry {
  const char* name;
  bool inLibc;
};

// The entry points checked by --expect-lib: the C core, and with --all-symbols every
// function a Strata drop-in library exports (operator new/delete by their mangled names).
const Entry kCoreEntries[] = {
    {"malloc", true},         {"free", true},
    {"calloc", true},         {"realloc", true},
    {"posix_memalign", true}, {"aligned_alloc", true},
    {"memalign", true},       {"malloc_usable_size", true},
};
const Entry kMoreEntries[] = {
    {"reallocarray", true},
    {"valloc", true},
    {"pvalloc", true},
    {"free_sized", false},
    {"free_aligned_sized", false},
    {"mallinfo2", true},
    {"malloc_stats", true},
    {"malloc_trim", true},
    {"__libc_malloc", true},
    {"__libc_free", true},
    {"__libc_calloc", true},
    {"__libc_realloc", true},
    {"__libc_memalign", true},
    {"__libc_valloc", true},
    {"__libc_pvalloc", true},
    {"_Znwm", false},
    {"_Znam", false},
    {"_ZnwmRKSt9nothrow_t", false},
    {"_ZnamRKSt9nothrow_t", false},
    {"_ZnwmSt11align_val_t", false},
    {"_ZnamSt11align_val_t", false},
    {"_ZnwmSt11align_val_tRKSt9nothrow_t", false},
    {"_ZnamSt11align_val_tRKSt9nothrow_t", false},
    {"_ZdlPv", false},
    {"_ZdaPv", false},
    {"_ZdlPvm", false},
    {"_ZdaPvm", false},
    {"_ZdlPvRKSt9nothrow_t", false},
    {"_ZdaPvRKSt9nothrow_t", false},
    {"_ZdlPvSt11align_val_t", false},
    {"_ZdaPvSt11align_val_t", false},
    {"_ZdlPvmSt11align_val_t", false},
    {"_ZdaPvmSt11align_val_t", false},
    {"_ZdlPvSt11align_val_tRKSt9nothrow_t", false},
    {"_ZdaPvSt11align_val_tRKSt9nothrow_t", false},
};

// Checks that entry e resolves, in the global lookup order (where LD_PRELOAD comes first), to a
// library whose path contains `expect`; prints a line for each mismatch. Returns its success.
bool entryFrom(const Entry& e, const std::string& expect) {
  void* sym = dlsym(RTLD_DEFAULT, e.name);
  if (sym == nullptr) {
    std::fprintf(stderr, "stress: %s: not found\n", e.name);
    return false;
  }
  Dl_info info{};
  if (dladdr(sym, &info) == 0 || info.dli_fname == nullptr) {
    std::fprintf(stderr, "stress: %s: dladdr found no library\n", e.name);
    return false;
  }
  if (std::string(info.dli_fname).find(expect) == std::string::npos) {
    std::fprintf(stderr, "stress: %s comes from %s, expected a library named like %s\n", e.name,
                 info.dli_fname, expect.c_str());
    return false;
  }
  return true;
}

// The path of the library malloc resolves to, for the summary line.
std::string mallocLibrary() {
  Dl_info info{};
  void* sym = dlsym(RTLD_DEFAULT, "malloc");
  if (sym != nullptr && dladdr(sym, &info) != 0 && info.dli_fname != nullptr) return info.dli_fname;
  return "?";
}

[[noreturn]] void usage() {
  std::fprintf(stderr,
               "usage: malloc_stress [--ops N] [--threads T] [--seed S] [--expect-lib NAME]"
               " [--check-only] [--all-symbols] [--max-rss-mib M]\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  long ops = 10'000'000;
  std::size_t nthreads = 4;
  std::uint64_t seed = 1;
  std::string expect;
  bool checkOnly = false;
  bool allSymbols = false;
  long maxRssMiB = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (a == "--ops")
      ops = std::strtol(value(), nullptr, 10);
    else if (a == "--threads")
      nthreads = std::strtoul(value(), nullptr, 10);
    else if (a == "--seed")
      seed = std::strtoull(value(), nullptr, 10);
    else if (a == "--expect-lib")
      expect = value();
    else if (a == "--check-only")
      checkOnly = true;
    else if (a == "--all-symbols")
      allSymbols = true;
    else if (a == "--max-rss-mib")
      maxRssMiB = std::strtol(value(), nullptr, 10);
    else
      usage();
  }
  if (nthreads < 1 || ops < 1) usage();

  if (!expect.empty()) {
    bool ok = true;
    bool libc = expect.find("libc.so") != std::string::npos;
    for (const Entry& e : kCoreEntries) ok = entryFrom(e, expect) && ok;
    if (allSymbols)
      for (const Entry& e : kMoreEntries)
        if (!libc || e.inLibc) ok = entryFrom(e, expect) && ok;
    if (!ok) {
      std::printf("stress: FAILED: the allocator in effect is not %s\n", expect.c_str());
      return 1;
    }
    if (checkOnly) {
      std::printf("stress: OK: %s entry points come from %s\n", allSymbols ? "all" : "core",
                  mallocLibrary().c_str());
      return 0;
    }
  }

  auto start = std::chrono::steady_clock::now();
  std::vector<Inbox> inboxes(nthreads);
  std::atomic<bool> stop{false};
  std::thread churn(churner, nthreads, std::ref(inboxes), std::cref(stop));
  std::vector<std::thread> workers;
  for (std::size_t t = 0; t < nthreads; ++t)
    workers.emplace_back(
        worker, t, nthreads,
        ops / static_cast<long>(nthreads) + (t == 0 ? ops % static_cast<long>(nthreads) : 0), seed,
        std::ref(inboxes));
  for (std::thread& t : workers) t.join();
  stop.store(true);
  churn.join();
  // Whatever is still queued was handed over after its receiver stopped: the main thread
  // checks and frees it (another cross-thread free).
  long leftovers = 0;
  for (Inbox& in : inboxes) {
    for (Obj& o : in.q) {
      release(o);
      ++leftovers;
    }
    in.q.clear();
  }
  gOps.fetch_add(leftovers);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  long peakMiB = usage.ru_maxrss / 1024;
  if (maxRssMiB > 0 && peakMiB > maxRssMiB) {
    std::fprintf(stderr, "stress: peak RSS %ld MiB is above the limit of %ld MiB\n", peakMiB,
                 maxRssMiB);
    gFailures.fetch_add(1);
  }
  long failures = gFailures.load();
  std::printf(
      "stress: %s threads=%zu ops=%ld cross_thread_frees=%ld ephemeral_threads=%ld failures=%ld "
      "time=%.2fs peak_rss=%ldMiB malloc=%s\n",
      failures == 0 ? "OK" : "FAILED", nthreads, gOps.load(), gCrossFrees.load() + leftovers,
      gEphemeralThreads.load(), failures, secs, peakMiB, mallocLibrary().c_str());
  return failures == 0 ? 0 : 1;
}
