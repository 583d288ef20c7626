// StrataHeap's types on one page: what each layer of strata_heap/ holds, how its memory
// nests, and the constants that fix the layout. Read this before any of the layers; the
// composition itself is general/strata_heap.hpp, and docs/layers/strata-heap.md follows a malloc
// and a free through it.
//
// Memory, outermost first:
//
//   segment   kStrataSegmentShift: 4 MiB, aligned to its size, from SegmentHeap (top/), which
//             keeps a segment map: any address finds its segment in two loads. Freed ones
//             wait in SegmentCache, committed, for the purge delay.
//   slot      kStrataSlotBits: 64 KiB, so a segment is 64 slots. Slot 0 holds the segment
//             header (SegmentSlots::Segment: a page descriptor per slot, the bit masks of
//             free, dirty and zero slots, the owning thread heap), rounded up to whole
//             pages of platform::kPageSize.
//   page      QueuedPage (page_queues.hpp) = SizeClassPage (building/) + queue links: a run
//             of slots holding blocks of one size class. Small classes (FineSizeClasses
//             with kStrataClassShift: 16-byte steps to 128 B, then 8 per power of two up to
//             128 KiB) carve their blocks a page of platform::kPageSize at a time; larger
//             classes are one block of whole slots.
//   block     what malloc returns: 16-byte aligned, no header; free finds its page from
//             the address (segment base, slot index, spanOf).
//   region    requests of kStrataMediumFrom (128 B) up to kStrataSpanMin: a run of slots
//             (about kStrataRegionBytes) of one thread's heap whose blocks carry a 16-byte
//             boundary tag and are joined with free neighbours when freed (MediumTier,
//             medium_tier.hpp, over CoalescingRegions in building/); its page descriptor
//             is marked so free finds the region as it finds a page.
//   span      above kStrataSpanMin (16 KiB) up to a quarter of an arena (and a page
//             more, room for a layer's header above): a run of 4 KiB
//             pages in a 128 MiB arena (LargeSpanHeap, large_span_heap.hpp; its page map is
//             SpanArena, span_arena.hpp), shared by all threads under one lock, placed best
//             fit and joined with free neighbours when freed. The arena's kind word tells
//             it from a segment and from a huge chunk.
//   huge      above the tunable threshold (at most the largest span, 32 MiB + 4 KiB): a chunk
//             of its own from SegmentHeap, with a 64-byte header whose kind word tells it from
//             a segment (HugeObjectHeap::kHugeKind vs SegmentSlots::kSegmentKind); freed ones
//             wait in HugeChunkCache (at most MaxChunks).
//
// Layers, process-wide chain top to bottom (one object), then the per-thread chain:
//
//   HugeObjectHeap       huge_object_heap.hpp    huge objects; routes by the chunk's kind
//   LargeSpanHeap        large_span_heap.hpp     spans: large objects as page runs in arenas
//   ThreadBoundHeap      thread_bound_heap.hpp   a Local per thread: TLS binding
//                                                (heap_registry.hpp), the pool of heaps and
//                                                orphans (heap_pool.hpp), fork, sweeps
//   SegmentCache         segment_cache.hpp       empty segments any thread reuses
//   AccountedSegments    accounted_segments.hpp  the system calls (through platform/), the
//                                                books (StrataHeapStats), the tunables
//   SegmentHeap          top/segment_heap.hpp    aligned segments and the segment map
//
//   Local = MediumTier   medium_tier.hpp         medium requests in coalescing regions, behind
//                                                small per-class front caches; its regions
//                                                and the frees into them: tier_regions.hpp
//           PageQueues   page_queues.hpp         per-class page queues, thread-free lists,
//                                                parking, reclaim
//           DelayedPurge delayed_purge.hpp       when released slots are decommitted
//           SegmentSlots segment_slots.hpp       segments cut into slots, pages as runs
//
// Purge (delayed_purge.hpp): a released page's slots stay committed ("dirty") up to the
// heap's allowance (StrataTunables::dirtySlots plus 1/8 of the used slots); beyond it an
// empty segment goes to SegmentCache and the rest is decommitted lazily
// (platform::Decommit::Lazy) once purgeDelayMs has passed, or all at once beyond
// maxDelayedBytes; trim and thread exit decommit with platform::Decommit::Now.
//
// Tunables: StrataTunables (strata_tunables.hpp), read on slow paths only; its defaults and
// the STRATA_* variables are listed there once. The constants below are template arguments
// of the fast paths instead: changing one is a different composition
// (StrataHeapOf<SegmentHeap<Shift>, FineSizeClasses<ClassShift>, SlotBits>).
#pragma once
#include <cstddef>

namespace strata {

// log2 of the segment size: 4 MiB segments (SegmentHeap's default).
inline constexpr unsigned kStrataSegmentShift = 22;
// log2 of the slot size: 64 KiB slots, 64 per segment (SegmentSlots allows 16..64: one
// 64-bit mask per segment).
inline constexpr unsigned kStrataSlotBits = 16;
// log2 of the size classes per power of two: 8 classes, at most 12.5 % rounding.
inline constexpr unsigned kStrataClassShift = 3;
// Requests from this many bytes up to kStrataSpanMin are medium: best-fit blocks in each
// thread's coalescing regions (MediumTier, medium_tier.hpp), of about kStrataRegionBytes.
inline constexpr std::size_t kStrataMediumFrom = 128;
inline constexpr std::size_t kStrataRegionBytes = std::size_t{1} << 20;
// Requests above this many bytes are spans (LargeSpanHeap) rather than size-class blocks.
inline constexpr std::size_t kStrataSpanMin = std::size_t{16} << 10;

}  // namespace strata
