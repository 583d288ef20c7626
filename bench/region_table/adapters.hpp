// region_table's allocators (region_table.cpp): one adapter per region, arena, pool, obstack
// or reap library, all with the interface the workloads (region_workloads.hpp) drive, and the
// LiveCounter that measures a workload's peak live bytes. Included once, by region_table.cpp.
#pragma once
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

#include "strata/top/malloc_heap.hpp"
#include "strata/top/memory_account.hpp"

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

}  // namespace rt
