// StrataHeap: Strata's general-purpose, multi-threaded allocator, the heap behind
// libstrata.so (layers/malloc/strata.cpp wraps it in MallocShim). A composition of its own
// layers in strata_heap/, top to bottom (strata_heap/types.hpp maps the types and holds the
// layout constants; docs/layers/strata-heap.md explains the design):
//
//   HugeObjectHeap      above the largest span: a chunk of its own, a few freed ones cached
//   LargeSpanHeap       above 16 KiB: runs of 4 KiB pages in shared arenas, best fit, joined
//   ThreadBoundHeap     a Local heap per thread; orphans adopted; fork; sweeps of quiet heaps
//     Local = MediumTier      128 B..16 KiB: best fit in coalescing regions of the thread's own
//             PageQueues      per-class pages, thread-free lists, parking (Hoard's ownership)
//             DelayedPurge    when released memory goes back (tunables' delay and allowance)
//             SegmentSlots    segments cut into 64 KiB slots, pages as runs of slots
//   SegmentCache        empty segments any thread can reuse, committed, for the delay
//   AccountedSegments   every system call and the books (MemoryAccount); StrataTunables
//   SegmentHeap         4 MiB-aligned segments from mmap, a segment map, a small cache
//
// Size classes: FineSizeClasses<3>, 16-byte classes to 128 B, then 8 per power of two up to
// 16 KiB, where spans take over (at most 12.5 % rounding; docs/layers/strata-heap.md says how
// both were chosen).
//
// Costs: malloc is a TLS check, a class computation and a free-list pop; free is a segment
// map lookup (two loads), a kind compare and a push (owner) or one CAS (any other thread).
// Never calls malloc: only mmap, munmap, madvise, atomics, spin locks and one pthread key.
// Construct it once into static storage for the process; as an ordinary object (tests), its
// destructor unmaps everything. The run-time policy is a StrataTunables passed to the
// constructor (libstrata.so reads it from STRATA_* environment variables).
#pragma once
#include <type_traits>

#include "strata/building/size_class_page.hpp"
#include "strata/combining/fine_size_classes.hpp"
#include "strata/strata_heap/accounted_segments.hpp"
#include "strata/strata_heap/delayed_purge.hpp"
#include "strata/strata_heap/huge_object_heap.hpp"
#include "strata/strata_heap/large_span_heap.hpp"
#include "strata/strata_heap/medium_tier.hpp"
#include "strata/strata_heap/page_queues.hpp"
#include "strata/strata_heap/segment_cache.hpp"
#include "strata/strata_heap/segment_slots.hpp"
#include "strata/strata_heap/thread_bound_heap.hpp"
#include "strata/strata_heap/types.hpp"
#include "strata/top/segment_heap.hpp"

namespace strata {

// The medium tier's bounds within Classes, and its regions' length in slots (about
// kStrataRegionBytes, at most half a segment). The tier starts at the class boundary at or
// above From: kStrataMediumFrom, or more under layers that make every block larger than its
// request (StrataSecureHeap), so that the same requests take the same path.
template <SizeClasses Classes>
constexpr std::size_t strataMediumTo() noexcept {
  return kStrataSpanMin < Classes::MaxClassSize ? kStrataSpanMin : Classes::MaxClassSize;
}
template <SizeClasses Classes, std::size_t From = kStrataMediumFrom>
constexpr std::size_t strataMediumFrom() noexcept {
  return From < strataMediumTo<Classes>() ? Classes::class2size(Classes::size2class(From))
                                          : strataMediumTo<Classes>();
}
template <std::size_t SegmentSize, unsigned SlotBits>
constexpr std::size_t strataRegionSlots() noexcept {
  const std::size_t half = (SegmentSize >> SlotBits) / 2;
  const std::size_t n = kStrataRegionBytes >> SlotBits;
  return n == 0 ? 1 : n > half ? half : n;
}

// The per-thread heap over a process-wide Source, with Classes for small objects; Page is the
// page descriptor (QueuedPage, or one whose free blocks keep their links another way);
// MediumFrom, where the medium tier starts (strataMediumFrom).
template <class Source, SizeClasses Classes = FineSizeClasses<kStrataClassShift>,
          unsigned SlotBits = kStrataSlotBits, class Page = QueuedPage,
          std::size_t MediumFrom = kStrataMediumFrom>
using StrataLocalHeap = MediumTier<
    Classes, PageQueues<Classes, DelayedPurge<SegmentSlots<Source, Page, SlotBits>>>,
    strataMediumFrom<Classes, MediumFrom>(), strataMediumTo<Classes>(),
    strataRegionSlots<Source::SegmentSize, SlotBits>()>;

// The whole allocator over an OS segment heap.
template <class Segments = SegmentHeap<kStrataSegmentShift>,
          SizeClasses Classes = FineSizeClasses<kStrataClassShift>, unsigned SlotBits = kStrataSlotBits,
          class Page = QueuedPage, std::size_t MediumFrom = kStrataMediumFrom>
using StrataHeapOf = HugeObjectHeap<LargeSpanHeap<ThreadBoundHeap<
    StrataLocalHeap<SegmentCache<AccountedSegments<Segments>>, Classes, SlotBits, Page, MediumFrom>,
    SegmentCache<AccountedSegments<Segments>>>, kStrataSpanMin>>;

class StrataHeap : public StrataHeapOf<> {
 public:
  explicit StrataHeap(const StrataTunables& t = {}) noexcept : StrataHeapOf<>(t) {}
};

static_assert(SizedHeap<StrataHeap> && StrataHeap::Alignment == 16);
static_assert(std::is_same_v<SegmentHeap<kStrataSegmentShift>, SegmentHeap<>>,
              "types.hpp's segment size is SegmentHeap's default");

}  // namespace strata
