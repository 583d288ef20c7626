// StrataHeap: Strata's general-purpose, multi-threaded allocator, the heap behind
// libstrata.so (src/malloc/strata.cpp wraps it in MallocShim).
//
//   OwnerThreadHeap   per-thread heaps owning size-class pages; frees from other threads go
//                     back to the owning page (thread-free lists); orphaned heaps adopted;
//                     128 KiB..4032 KiB: one-block pages of whole 64 KiB slots; beyond:
//                     own mapping (a few freed ones cached)
//   FineSizeClasses   16-byte classes to 128 B, then 8 per power of two up to 128 KiB
//   SegmentHeap       4 MiB-aligned segments from mmap, a segment map, a small cache
//
// Why 8 classes per power of two (at most 12.5 % rounding): measured by LD_PRELOAD with
// bench/preload_table against 16 per power of two, the server workloads' peak RSS drops from
// 1.42x / 1.67x glibc's to 1.24x / 1.27x (their 4..32 KiB request bodies spread over half as
// many partly used pages), random churn stays at 1.07x and grow-shrink rises by 1-2 %;
// 4 per power of two costs grow-shrink another 3 %.
//
// Costs: malloc is a TLS check, a class computation and a free-list pop; free is a segment
// map lookup (two loads) and a push (owner) or one CAS (any other thread). Everything else
// (new pages, collecting thread-free lists, releasing and decommitting empty memory) is on
// slow paths; see threads/owner_thread_heap.hpp for the design, what foreign pointers are
// detected, and how thread exit and fork are handled. Never calls malloc: only mmap, munmap,
// madvise, atomics, spin locks and one pthread key.
//
// The API the malloc shim uses: malloc, free, getSize, memalign(align, n) (any power of two
// up to 1 GiB), reallocInPlace(p, n), trim(pad), prepareFork/parentAfterFork/childAfterFork,
// stats() -> StrataHeapStats. Construct it once into static storage for the process; as an
// ordinary object (tests), its destructor unmaps everything.
#pragma once
#include "strata/combining/fine_size_classes.hpp"
#include "strata/threads/owner_thread_heap.hpp"
#include "strata/top/segment_heap.hpp"

namespace strata {

class StrataHeap : public OwnerThreadHeap<SegmentHeap<>, FineSizeClasses<3>> {
 public:
  using OwnerThreadHeap::OwnerThreadHeap;
};

static_assert(SizedHeap<StrataHeap> && StrataHeap::Alignment == 16);

}  // namespace strata
