// region_table: regions, obstacks, pools, arenas and reaps side by side on region-style
// programs (after the reaps paper, "Reconsidering Custom Memory Allocation", §2 and §6):
// time, its ratio to the reap's, and peak memory, one table per workload.
//
//   region_table                   every workload, 5 runs each (under ~3 minutes)
//   region_table --quick           small workloads, 3 runs (a few seconds)
//   region_table --runs 9 --workload producer-consumer
//
// Workloads (every object's requested bytes are written once):
//   phases             compiler-like: 20 phases, each a region of 150k objects of 8..128 B
//                      created, filled and destroyed at once; a long-lived root region.
//   scopes             obstack style: nested scopes (random walk, depth <= 64), 1..8 objects
//                      of 8..256 B per scope, each scope freed back to its mark (or, where
//                      the API has no mark, a child region destroyed).
//   stack              xalloc style: a random walk of LIFO pushes and pops (objects of
//                      16..256 B), each pop freeing the most recent live object.
//   producer-consumer  a FIFO queue (2000..40000 objects of 16..256 B, the producer ahead
//                      and behind in turns): the producer allocates, the consumer frees the
//                      oldest. Allocators that cannot
//                      free one object grow without bound here.
//   server             16 open connections, each a child region of the server, living for
//                      8..32 requests; each request a child region of its connection with
//                      20..60 objects of 16..512 B and one 1..8 KiB buffer.
//
// Every run is a fork()ed child (measure.hpp, shared with gp_table): warm-up, file
// mappings made resident, peak-RSS reset, exact baseline; the clock covers the whole
// workload, region creation and destruction included. Columns:
//   time   median wall time, ms
//   ratio  time / the reap's time (or glibc malloc's when the reap is not built)
//   RSS    peak resident growth during the run, MiB, measured the same way for all
//   held   peak bytes Strata heaps held from the system (processAccount()); blank otherwise
//   RSS/live, held/live   the same divided by the workload's peak live bytes
//   live   (title line) the workload's peak of requested bytes alive at once
#include <dlfcn.h>
#include <obstack.h>
#define obstack_chunk_alloc ::malloc
#define obstack_chunk_free ::free

#include <apr_general.h>
#include <apr_pools.h>
#include <mimalloc.h>
#include <talloc.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory_resource>
#include <string>
#include <vector>

#include "measure.hpp"
#include "table_options.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/memory_account.hpp"
#include "workloads.hpp"

// Strata's own special-purpose heaps and reaps: picked up when their headers exist.
#if __has_include("strata/reap/reap.hpp")
#include "strata/reap/reap.hpp"
#define RT_HAVE_REAP 1
#endif
#if __has_include("strata/special/zone_heap.hpp")
#include "strata/special/zone_heap.hpp"
#define RT_HAVE_ZONE 1
#endif
#if __has_include("strata/special/obstack_heap.hpp")
#include "strata/special/obstack_heap.hpp"
#define RT_HAVE_OBSTACK 1
#endif
#if __has_include("strata/special/xalloc_heap.hpp")
#include "strata/special/xalloc_heap.hpp"
#define RT_HAVE_XALLOC 1
#endif
#if defined(RT_LINK_REGION) && __has_include("strata/region.h")
#include "strata/region.h"
#define RT_HAVE_REGION 1
#endif

namespace rt {

using strata::bench::Clock;
using strata::bench::RunResult;

// ---------------------------------------------------------------------------------------
// Adapters. Each has the same interface:
//   Region* create(Region* parent)      parent may be null
//   void*   alloc(Region*, size)
//   void    free(Region*, p, size)      one object; a no-op where the API has none
//   void    clear(Region*)              free every object, keep the region
//   void    destroy(Region*)
// and optionally
//   Mark    mark(Region*) / void release(Region*, Mark)   free back to a mark
//   void    popLast(Region*, p, size)   free the most recent live object (LIFO); defaults
//                                       to free()
// The workloads destroy children before their parents, so no adapter relies on nesting.
// ---------------------------------------------------------------------------------------

// glibc obstack over malloc/free. No single free (obstack_free frees everything after the
// object too), so free() is a no-op; but a LIFO pop is exactly obstack_free.
struct GlibcObstack {
  struct Region {
    struct obstack ob;
    void* first;
  };
  using Mark = void*;
  Region* create(Region*) {
    auto* r = static_cast<Region*>(std::malloc(sizeof(Region)));
    obstack_init(&r->ob);
    r->first = obstack_alloc(&r->ob, 0);
    return r;
  }
  void* alloc(Region* r, std::size_t n) { return obstack_alloc(&r->ob, n); }
  void free(Region*, void*, std::size_t) {}
  void popLast(Region* r, void* p, std::size_t) { obstack_free(&r->ob, p); }
  Mark mark(Region* r) { return obstack_alloc(&r->ob, 0); }
  void release(Region* r, Mark m) { obstack_free(&r->ob, m); }
  void clear(Region* r) { obstack_free(&r->ob, r->first); r->first = obstack_alloc(&r->ob, 0); }
  void destroy(Region* r) {
    obstack_free(&r->ob, nullptr);
    std::free(r);
  }
};

// APR pools: subpools for nesting, no single free, no mark.
struct AprPools {
  using Region = apr_pool_t;
  Region* create(Region* parent) {
    apr_pool_t* p = nullptr;
    return apr_pool_create(&p, parent) == APR_SUCCESS ? p : nullptr;
  }
  void* alloc(Region* r, std::size_t n) { return apr_palloc(r, n); }
  void free(Region*, void*, std::size_t) {}
  void clear(Region* r) { apr_pool_clear(r); }
  void destroy(Region* r) { apr_pool_destroy(r); }
};

// talloc: hierarchical contexts, every object its own malloc with a talloc header.
struct Talloc {
  using Region = void;
  Region* create(Region* parent) { return talloc_new(parent); }
  void* alloc(Region* r, std::size_t n) { return talloc_size(r, n); }
  void free(Region*, void* p, std::size_t) { talloc_free(p); }
  void clear(Region* r) { talloc_free_children(r); }
  void destroy(Region* r) { talloc_free(r); }
};

// talloc with talloc_pool: each context carves its objects from one preallocated block
// (1 MiB at the root, 16 KiB below), falling back to malloc when it is full.
struct TallocPool {
  using Region = void;
  Region* create(Region* parent) {
    return talloc_pool(parent, parent == nullptr ? (1u << 20) : (16u << 10));
  }
  void* alloc(Region* r, std::size_t n) { return talloc_size(r, n); }
  void free(Region*, void* p, std::size_t) { talloc_free(p); }
  void clear(Region* r) { talloc_free_children(r); }
  void destroy(Region* r) { talloc_free(r); }
};

// std::pmr::monotonic_buffer_resource over new/delete: deallocate is a no-op.
struct PmrMonotonic {
  using Region = std::pmr::monotonic_buffer_resource;
  Region* create(Region*) { return new Region(std::pmr::new_delete_resource()); }
  void* alloc(Region* r, std::size_t n) { return r->allocate(n, 16); }
  void free(Region* r, void* p, std::size_t n) { r->deallocate(p, n, 16); }
  void clear(Region* r) { r->release(); }
  void destroy(Region* r) { delete r; }
};

// std::pmr::unsynchronized_pool_resource over new/delete: pools per size, real frees.
struct PmrPool {
  using Region = std::pmr::unsynchronized_pool_resource;
  Region* create(Region*) { return new Region(std::pmr::new_delete_resource()); }
  void* alloc(Region* r, std::size_t n) { return r->allocate(n, 16); }
  void free(Region* r, void* p, std::size_t n) { r->deallocate(p, n, 16); }
  void clear(Region* r) { r->release(); }
  void destroy(Region* r) { delete r; }
};

// mimalloc heaps. libmimalloc.so defines malloc/free itself, so linking it would put
// mimalloc under every other allocator in this program (glibc malloc, obstack, APR, ...);
// it is dlopen()ed RTLD_LOCAL instead and its heap functions looked up by name.
struct MiApi {
  decltype(&mi_heap_new) heapNew = nullptr;
  decltype(&mi_heap_malloc) heapMalloc = nullptr;
  decltype(&mi_free) free = nullptr;
  decltype(&mi_heap_destroy) heapDestroy = nullptr;
  bool ok() const { return heapNew && heapMalloc && free && heapDestroy; }
};

const MiApi& miApi() {
  static const MiApi api = [] {
    MiApi a;
    void* lib = ::dlopen("libmimalloc.so.2", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) lib = ::dlopen("libmimalloc.so", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return a;
    a.heapNew = reinterpret_cast<decltype(&mi_heap_new)>(::dlsym(lib, "mi_heap_new"));
    a.heapMalloc = reinterpret_cast<decltype(&mi_heap_malloc)>(::dlsym(lib, "mi_heap_malloc"));
    a.free = reinterpret_cast<decltype(&mi_free)>(::dlsym(lib, "mi_free"));
    a.heapDestroy =
        reinterpret_cast<decltype(&mi_heap_destroy)>(::dlsym(lib, "mi_heap_destroy"));
    return a;
  }();
  return api;
}

struct MimallocHeap {
  struct Region {
    mi_heap_t* heap;
  };
  const MiApi& mi = miApi();
  Region* create(Region*) { return new Region{mi.heapNew()}; }
  void* alloc(Region* r, std::size_t n) { return mi.heapMalloc(r->heap, n); }
  void free(Region*, void* p, std::size_t) { mi.free(p); }
  void clear(Region* r) {
    mi.heapDestroy(r->heap);
    r->heap = mi.heapNew();
  }
  void destroy(Region* r) {
    mi.heapDestroy(r->heap);
    delete r;
  }
};

// glibc malloc/free, the region's objects recorded in a deque and freed one by one at
// clear/destroy. A single free removes its record: O(1) at either end (the LIFO and FIFO
// workloads), a search otherwise.
struct PlainMalloc {
  struct Region {
    std::deque<void*> objects;
  };
  Region* create(Region*) { return new Region; }
  void* alloc(Region* r, std::size_t n) {
    void* p = std::malloc(n);
    if (p != nullptr) r->objects.push_back(p);
    return p;
  }
  void free(Region* r, void* p, std::size_t) {
    auto& o = r->objects;
    if (!o.empty() && o.back() == p) {
      o.pop_back();
    } else if (!o.empty() && o.front() == p) {
      o.pop_front();
    } else if (auto it = std::find(o.begin(), o.end(), p); it != o.end()) {
      o.erase(it);
    }
    std::free(p);
  }
  void clear(Region* r) {
    for (void* p : r->objects) std::free(p);
    r->objects.clear();
  }
  void destroy(Region* r) {
    clear(r);
    delete r;
  }
};

#ifdef RT_HAVE_REGION
// The region emulator (<strata/region.h>) over glibc malloc: no single free.
struct RegionEmulator {
  using Region = strata_region;
  Region* create(Region* parent) { return region_create(parent); }
  void* alloc(Region* r, std::size_t n) { return region_alloc(r, n); }
  void free(Region*, void*, std::size_t) {}
  void clear(Region* r) { region_clear(r); }
  void destroy(Region* r) { region_destroy(r); }
};
#endif

// STRATA_ADAPTERS_BEGIN (written against the headers present at build time)
// Every Strata heap here gets its chunks from glibc malloc (MallocHeap), as the others do,
// and charges them to processAccount(): the "held" column.
#ifdef RT_HAVE_REAP
// strata::Reap: nesting with createChild/destroyChild, single frees go to its Lea-style
// store. No mark: a scope is a child reap.
struct StrataReap {
  using Region = strata::Reap<strata::MallocHeap>;
  Region* create(Region* parent) {
    return parent != nullptr ? parent->createChild() : new Region;
  }
  void* alloc(Region* r, std::size_t n) { return r->malloc(n); }
  void free(Region* r, void* p, std::size_t) { r->free(p); }
  void clear(Region* r) { r->clear(); }
  void destroy(Region* r) {
    if (r->parent() != nullptr) {
      r->parent()->destroyChild(r);
    } else {
      delete r;
    }
  }
};
#endif
#ifdef RT_HAVE_ZONE
// strata::ZoneHeap, 16 KiB chunks: no single free, no nesting (a child is a zone of its own).
struct StrataZone {
  using Region = strata::ZoneHeap<16384, strata::MallocHeap>;
  Region* create(Region*) { return new Region; }
  void* alloc(Region* r, std::size_t n) { return r->malloc(n); }
  void free(Region*, void*, std::size_t) {}
  void clear(Region* r) { r->clear(); }
  void destroy(Region* r) { delete r; }
};
#endif
#ifdef RT_HAVE_OBSTACK
// strata::ObstackHeap, 4 KiB chunks (glibc's obstack default is 4064 B): free(p) pops p and
// everything after it, so it is the mark/release and the LIFO pop; a single free in any
// other order is a no-op here.
struct StrataObstack {
  using Region = strata::ObstackHeap<4096, strata::MallocHeap>;
  using Mark = void*;
  Region* create(Region*) { return new Region; }
  void* alloc(Region* r, std::size_t n) { return r->malloc(n); }
  void free(Region*, void*, std::size_t) {}
  void popLast(Region* r, void* p, std::size_t) { r->free(p); }
  Mark mark(Region* r) { return r->malloc(0); }
  void release(Region* r, Mark m) { r->free(m); }
  void clear(Region* r) { r->clear(); }
  void destroy(Region* r) { delete r; }
};
#endif
#ifdef RT_HAVE_XALLOC
// strata::XallocHeap, 16 KiB chunks: free pops the top block (and freed blocks below it);
// any other block is only marked free. No mark: a scope is an arena of its own.
struct StrataXalloc {
  using Region = strata::XallocHeap<16384, strata::MallocHeap>;
  Region* create(Region*) { return new Region; }
  void* alloc(Region* r, std::size_t n) { return r->malloc(n); }
  void free(Region* r, void* p, std::size_t) { r->free(p); }
  void clear(Region* r) { r->clear(); }
  void destroy(Region* r) { delete r; }
};
#endif
// STRATA_ADAPTERS_END

// Counts requested bytes alive at once: run once per workload, untimed, for the "live"
// figure. Never touches memory.
struct LiveCounter {
  struct Region {
    std::size_t bytes = 0;
  };
  std::size_t live = 0, peak = 0;
  char dummy[1]{};
  Region* create(Region*) { return new Region; }
  void* alloc(Region* r, std::size_t n) {
    r->bytes += n;
    live += n;
    peak = std::max(peak, live);
    return nullptr;
  }
  void free(Region* r, void*, std::size_t n) {
    r->bytes -= n;
    live -= n;
  }
  void clear(Region* r) {
    live -= r->bytes;
    r->bytes = 0;
  }
  void destroy(Region* r) {
    clear(r);
    delete r;
  }
};

// ---------------------------------------------------------------------------------------
// Workloads
// ---------------------------------------------------------------------------------------

// Sizes drawn before anything is timed (logUniform calls pow, which would cost more than a
// bump allocation), replayed cyclically.
class Sizes {
 public:
  Sizes(std::uint32_t lo, std::uint32_t hi, std::uint64_t seed) : table_(kCount) {
    strata::bench::Rng rng(seed);
    for (auto& s : table_) s = rng.logUniform(lo, hi);
  }
  std::uint32_t next() noexcept { return table_[i_++ & (kCount - 1)]; }

 private:
  static constexpr std::size_t kCount = 1 << 16;
  std::vector<std::uint32_t, strata::bench::MappedAllocator<std::uint32_t>> table_;
  std::size_t i_ = 0;
};

// An object on a workload's own stack or queue (kept in scratch memory mapped before the
// baseline, so the harness's bookkeeping is not counted as the allocator's memory).
struct Entry {
  void* p;
  std::size_t n;
};

// What a workload body sees: the counting run passes touch = false.
struct Ctx {
  double scale;
  Entry* scratch;          // kScratch entries
  bool touch = true;
  std::size_t failures = 0;
};
constexpr std::size_t kScratch = 1 << 16;

template <class A>
inline void* allocTouch(A& a, typename A::Region* r, std::size_t n, Ctx& c) {
  void* p = a.alloc(r, n);
  if (c.touch) {
    if (p != nullptr) {
      std::memset(p, static_cast<int>(n) | 1, n);
    } else {
      ++c.failures;
    }
  }
  return p;
}

template <class A>
concept HasMark = requires(A a, typename A::Region* r) { a.release(r, a.mark(r)); };
template <class A>
concept HasPopLast = requires(A a, typename A::Region* r, void* p) { a.popLast(r, p, 1); };

std::size_t scaled(double full, double scale) {
  return static_cast<std::size_t>(std::max(full * scale, 16.0));
}

// (a) compiler-like phases.
template <class A>
void phases(A& a, Ctx& c) {
  Sizes sizes(8, 128, 201);
  const std::size_t perPhase = scaled(150000, c.scale);
  auto* root = a.create(nullptr);
  for (int phase = 0; phase < 20; ++phase) {
    for (int i = 0; i < 16; ++i) allocTouch(a, root, 64, c);   // the long-lived tables
    auto* r = a.create(root);
    for (std::size_t i = 0; i < perPhase; ++i) allocTouch(a, r, sizes.next(), c);
    a.destroy(r);
  }
  a.destroy(root);
}

// (b) obstack-style nested scopes, each freed back to its mark.
template <class A>
void scopes(A& a, Ctx& c) {
  Sizes sizes(8, 256, 202);
  strata::bench::Rng rng(302);
  const std::size_t steps = scaled(1e6, c.scale);
  constexpr std::size_t kMaxDepth = 64;
  auto* root = a.create(nullptr);
  if constexpr (HasMark<A>) {
    using Mark = decltype(a.mark(root));
    Mark marks[kMaxDepth];
    std::size_t depth = 0;
    for (std::size_t s = 0; s < steps; ++s) {
      if (depth == 0 || (depth < kMaxDepth && rng.below(100) < 52)) {
        marks[depth++] = a.mark(root);
        const std::size_t k = 1 + rng.below(8);
        for (std::size_t i = 0; i < k; ++i) allocTouch(a, root, sizes.next(), c);
      } else {
        a.release(root, marks[--depth]);
      }
    }
    while (depth > 0) a.release(root, marks[--depth]);
  } else {
    typename A::Region* stack[kMaxDepth + 1];
    std::size_t depth = 0;
    stack[0] = root;
    for (std::size_t s = 0; s < steps; ++s) {
      if (depth == 0 || (depth < kMaxDepth && rng.below(100) < 52)) {
        stack[depth + 1] = a.create(stack[depth]);
        ++depth;
        const std::size_t k = 1 + rng.below(8);
        for (std::size_t i = 0; i < k; ++i) allocTouch(a, stack[depth], sizes.next(), c);
      } else {
        a.destroy(stack[depth--]);
      }
    }
    while (depth > 0) a.destroy(stack[depth--]);
  }
  a.destroy(root);
}

// (c) xalloc-style stack: LIFO individual frees.
template <class A>
void stack(A& a, Ctx& c) {
  Sizes sizes(16, 256, 203);
  strata::bench::Rng rng(303);
  const std::size_t steps = scaled(1.6e6, c.scale);
  auto* r = a.create(nullptr);
  std::size_t depth = 0;
  for (std::size_t s = 0; s < steps; ++s) {
    if (depth == 0 || (depth < kScratch && rng.below(2) == 0)) {
      const std::size_t n = sizes.next();
      c.scratch[depth++] = {allocTouch(a, r, n, c), n};
    } else {
      const Entry e = c.scratch[--depth];
      if constexpr (HasPopLast<A>) {
        a.popLast(r, e.p, e.n);
      } else {
        a.free(r, e.p, e.n);
      }
    }
  }
  a.destroy(r);
}

// (d) producer-consumer: a FIFO queue, the oldest object freed first.
template <class A>
void producerConsumer(A& a, Ctx& c) {
  Sizes sizes(16, 256, 204);
  strata::bench::Rng rng(304);
  const std::size_t steps = scaled(2e6, c.scale);
  constexpr std::size_t kMask = kScratch - 1;
  const std::size_t lo = scaled(2000, std::min(1.0, c.scale * 4));
  const std::size_t hi = 20 * lo;   // <= kScratch
  const std::size_t block = scaled(100000, std::min(1.0, c.scale * 4));
  auto* r = a.create(nullptr);
  std::size_t head = 0, tail = 0;   // live objects are [head, tail)
  for (std::size_t s = 0; s < steps; ++s) {
    // Bursts: the producer is ahead (60 %) for a block of steps, then behind (40 %).
    const std::uint64_t produce = (s / block) % 2 == 0 ? 60 : 40;
    const std::size_t len = tail - head;
    if (len < lo || (len < hi && rng.below(100) < produce)) {
      const std::size_t n = sizes.next();
      c.scratch[tail++ & kMask] = {allocTouch(a, r, n, c), n};
    } else {
      const Entry e = c.scratch[head++ & kMask];
      a.free(r, e.p, e.n);
    }
  }
  a.destroy(r);
}

// (e) a server: a region per connection, a child region per request.
template <class A>
void server(A& a, Ctx& c) {
  Sizes sizes(16, 512, 205);
  Sizes buffers(1024, 8192, 206);
  strata::bench::Rng rng(305);
  const std::size_t requests = scaled(50000, c.scale);
  constexpr std::size_t kOpen = 16;
  auto* root = a.create(nullptr);
  typename A::Region* conn[kOpen];
  std::size_t left[kOpen];
  auto open = [&](std::size_t i) {
    conn[i] = a.create(root);
    left[i] = 8 + rng.below(25);
    allocTouch(a, conn[i], 4096, c);   // its I/O buffer
    for (int k = 0; k < 10; ++k) allocTouch(a, conn[i], sizes.next(), c);
  };
  for (std::size_t i = 0; i < kOpen; ++i) open(i);
  for (std::size_t q = 0; q < requests; ++q) {
    const std::size_t i = rng.below(kOpen);
    auto* req = a.create(conn[i]);
    allocTouch(a, req, buffers.next(), c);
    const std::size_t k = 20 + rng.below(41);
    for (std::size_t j = 0; j < k; ++j) allocTouch(a, req, sizes.next(), c);
    a.destroy(req);
    if (--left[i] == 0) {
      a.destroy(conn[i]);
      open(i);
    }
  }
  for (std::size_t i = 0; i < kOpen; ++i) a.destroy(conn[i]);
  a.destroy(root);
}

struct WorkloadInfo {
  const char* name;
  const char* what;
};
constexpr WorkloadInfo kWorkloads[] = {
    {"phases", "(a) compiler phases: a region per phase, 8..128 B objects freed at once"},
    {"scopes", "(b) obstack-style nested scopes freed back to a mark, 8..256 B"},
    {"stack", "(c) xalloc-style stack: LIFO individual frees, 16..256 B"},
    {"producer-consumer", "(d) FIFO queue of 2k..40k objects of 16..256 B in bursts, individual frees"},
    {"server", "(e) server: region per connection, child region per request"},
};
constexpr int kWorkloadCount = sizeof kWorkloads / sizeof kWorkloads[0];

template <class A>
void runWorkload(int w, A& a, Ctx& c) {
  switch (w) {
    case 0: phases(a, c); break;
    case 1: scopes(a, c); break;
    case 2: stack(a, c); break;
    case 3: producerConsumer(a, c); break;
    default: server(a, c); break;
  }
}

// ---------------------------------------------------------------------------------------
// Measurement
// ---------------------------------------------------------------------------------------

template <class A>
RunResult measureOnce(int w, double scale, bool strataHeap) {
  using namespace strata::bench;
  return inChild([&] {
    RunResult r;
    Entry* scratch = reinterpret_cast<Entry*>(freshSlots(kScratch * 2));
    if (scratch == nullptr) return r;
    {  // warm-up: the code paths once, on a tiny version of the workload
      A warm;
      Ctx wc{0.0005, scratch};
      runWorkload(w, warm, wc);
    }
    populateFileMappings();
    if (!resetPeakRss()) return r;
    strata::processAccount().resetPeak();
    const std::size_t heldBefore = strata::processAccount().held();
    const std::size_t before = exactRss();
    Ctx c{scale, scratch};
    const auto t0 = Clock::now();
    {
      A a;
      runWorkload(w, a, c);
    }
    r.ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    r.rss = peakDelta(before);
    r.held = strataHeap ? strata::processAccount().peak() - heldBefore : 0;
    r.failures = c.failures;
    r.ok = true;
    return r;
  });
}

struct Allocator {
  std::string name;
  bool built;          // false: printed as "not built"
  bool strataHeap;     // held is measured
  bool isReap;
  std::function<RunResult(int, double)> run;
};

template <class A>
Allocator entry(std::string name, bool strataHeap = false, bool isReap = false) {
  return {std::move(name), true, strataHeap, isReap,
          [strataHeap](int w, double s) { return measureOnce<A>(w, s, strataHeap); }};
}
Allocator missing(std::string name) { return {std::move(name), false, false, false, {}}; }

std::vector<Allocator> allocators() {
  std::vector<Allocator> all;
  // STRATA_ENTRIES_BEGIN
#ifdef RT_HAVE_REAP
  all.push_back(entry<StrataReap>("strata Reap", true, true));
#else
  all.push_back(missing("strata Reap"));
#endif
#ifdef RT_HAVE_ZONE
  all.push_back(entry<StrataZone>("strata ZoneHeap", true));
#else
  all.push_back(missing("strata ZoneHeap"));
#endif
#ifdef RT_HAVE_OBSTACK
  all.push_back(entry<StrataObstack>("strata ObstackHeap", true));
#else
  all.push_back(missing("strata ObstackHeap"));
#endif
#ifdef RT_HAVE_XALLOC
  all.push_back(entry<StrataXalloc>("strata XallocHeap", true));
#else
  all.push_back(missing("strata XallocHeap"));
#endif
  // STRATA_ENTRIES_END
  all.push_back(entry<GlibcObstack>("glibc obstack"));
  all.push_back(entry<AprPools>("APR pools"));
  all.push_back(entry<Talloc>("talloc"));
  all.push_back(entry<TallocPool>("talloc_pool"));
  all.push_back(entry<PmrMonotonic>("pmr monotonic"));
  all.push_back(entry<PmrPool>("pmr unsync pool"));
  if (miApi().ok()) {
    all.push_back(entry<MimallocHeap>("mimalloc heap"));
  } else {
    all.push_back(missing("mimalloc heap"));
  }
#ifdef RT_HAVE_REGION
  all.push_back(entry<RegionEmulator>("region emulator"));
#else
  all.push_back(missing("region emulator"));
#endif
  all.push_back(entry<PlainMalloc>("glibc malloc/free"));
  return all;
}

std::size_t peakLive(int w, double scale) {
  LiveCounter counter;
  std::vector<Entry> scratch(kScratch);
  Ctx c{scale, scratch.data()};
  c.touch = false;
  runWorkload(w, counter, c);
  return counter.peak;
}

using Options = strata::bench::TableOptions;

const strata::bench::TableProgram kProgram{
    "region_table", "region_table [--quick] [--runs N] [--workload NAME] [--allocator NAME]",
    "phases scopes stack producer-consumer server (or a..e)",
    "time and memory of region allocators on region programs", false};

Options parse(int argc, char** argv) {
  return strata::bench::parseTableOptions(kProgram, argc, argv);
}

constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace rt

int main(int argc, char** argv) {
  using namespace rt;
  const Options opt = parse(argc, argv);
  const double scale = opt.quick ? 0.05 : 1.0;
  apr_initialize();
  std::vector<Allocator> allocs = allocators();
  if (!opt.allocator.empty()) {
    std::erase_if(allocs, [&](const Allocator& a) { return a.name != opt.allocator; });
    if (allocs.empty())
      strata::bench::tableUsage(kProgram, ("no allocator named " + opt.allocator).c_str());
  }
  if (!opt.workload.empty()) {
    bool known = false;
    for (int w = 0; w < kWorkloadCount; ++w)
      known = known || opt.workload == kWorkloads[w].name ||
              (opt.workload.size() == 1 && opt.workload[0] == "abcde"[w]);
    if (!known) strata::bench::tableUsage(kProgram, ("no workload named " + opt.workload).c_str());
  }
  std::printf("Region allocators: median of %d runs, each in a fresh child process%s\n",
              opt.runs, opt.quick ? " (--quick: 1/20 size)" : "");
  std::printf("ratio = median over the rounds of time / the reap's time in the same round "
              "(glibc malloc/free's if the reap is not built); "
              "RSS = peak resident growth; held = peak bytes a Strata heap held\n");

  bool matched = false, anyFailed = false;
  for (int w = 0; w < kWorkloadCount; ++w) {
    const std::string name = kWorkloads[w].name;
    if (!opt.workload.empty() && opt.workload != name &&
        !(opt.workload.size() == 1 && opt.workload[0] == "abcde"[w]))
      continue;
    matched = true;
    const double live = static_cast<double>(peakLive(w, scale));
    std::printf("\n%s — %s; peak live %.2f MiB\n", name.c_str(), kWorkloads[w].what,
                live / kMiB);
    std::printf("%-20s %9s %7s %9s %8s %9s %9s  %s\n", "allocator", "time ms", "ratio",
                "RSS MiB", "RSS/live", "held MiB", "held/live", "status");
    struct Row {
      const Allocator* a;
      double ms = 0, rss = 0, held = 0;
      int ok = 0, failed = 0;
    };
    std::vector<Row> rows;
    for (const Allocator& a : allocs) rows.push_back({&a});
    std::vector<std::vector<double>> ms(rows.size()), rss(rows.size()), held(rows.size());
    std::vector<std::vector<double>> round(rows.size());  // each round's time, -1 if it failed
    for (int run = 0; run < opt.runs; ++run) {
      for (std::size_t i = 0; i < rows.size(); ++i) {
        if (!rows[i].a->built) continue;
        const RunResult r = rows[i].a->run(w, scale);
        if (!r.ok || r.failures != 0) {
          ++rows[i].failed;
          round[i].push_back(-1);
          continue;
        }
        round[i].push_back(r.ms);
        ms[i].push_back(r.ms);
        rss[i].push_back(static_cast<double>(r.rss));
        held[i].push_back(static_cast<double>(r.held));
      }
    }
    std::size_t baseRow = rows.size();
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (rows[i].a->isReap && !ms[i].empty()) baseRow = i;
    if (baseRow == rows.size())
      for (std::size_t i = 0; i < rows.size(); ++i)
        if (rows[i].a->name == "glibc malloc/free" && !ms[i].empty()) baseRow = i;
    // Each row's ratio is the median of its per-round ratios to the base row, so that a change
    // of load on the machine between rounds cancels out.
    std::vector<double> ratio(rows.size(), 0.0);
    for (std::size_t i = 0; i < rows.size() && baseRow < rows.size(); ++i)
      ratio[i] = strata::bench::pairedRatio(round[i], round[baseRow]);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (ms[i].empty()) continue;
      rows[i].ok = static_cast<int>(ms[i].size());
      rows[i].ms = strata::bench::median(ms[i]);
      rows[i].rss = strata::bench::median(rss[i]);
      rows[i].held = strata::bench::median(held[i]);
    }
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      if (!r.a->built) {
        std::printf("%-20s %9s %7s %9s %8s %9s %9s  not built\n", r.a->name.c_str(), "-", "-",
                    "-", "-", "-", "-");
        continue;
      }
      if (r.ok == 0) {
        anyFailed = true;
        std::printf("%-20s %9s %7s %9s %8s %9s %9s  FAILED in all %d runs\n",
                    r.a->name.c_str(), "-", "-", "-", "-", "-", "-", r.failed);
        continue;
      }
      char heldText[32] = "", heldRatio[32] = "";
      if (r.a->strataHeap) {
        std::snprintf(heldText, sizeof heldText, "%.2f", r.held / kMiB);
        std::snprintf(heldRatio, sizeof heldRatio, "%.2f", live > 0 ? r.held / live : 0.0);
      }
      char status[48] = "ok";
      if (r.failed != 0) {
        anyFailed = true;
        std::snprintf(status, sizeof status, "ok (%d runs failed)", r.failed);
      }
      std::printf("%-20s %9.1f %7.2f %9.2f %8.2f %9s %9s  %s\n", r.a->name.c_str(), r.ms,
                  ratio[i], r.rss / kMiB, live > 0 ? r.rss / live : 0.0,
                  heldText, heldRatio, status);
    }
  }
  if (!matched)
    strata::bench::tableUsage(kProgram, ("no workload named " + opt.workload).c_str());
  return anyFailed ? 1 : 0;
}
