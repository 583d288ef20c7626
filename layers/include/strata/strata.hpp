// Strata in one include: every public header (the concepts, the platform layer, then the
// layers folder by folder: top heaps, object representations, building blocks, combining
// layers, general-purpose heaps (StrataHeap hardened too), the hardening layers, utilities,
// thread layers, StrataHeap's own layers,
// special-purpose heaps, reaps, and the malloc shim that turns a heap into a drop-in malloc), for programs that would rather not
// pick headers one by one. The allocation trace format is the toolkit's (strata::trace,
// <strata/trace/*.hpp>), not part of the layers. The detail/ headers come in through
// the layers that use them. Including it costs compile time only: every layer is a template,
// instantiated only where it is used.
#pragma once

#include "strata/concepts.hpp"

#include "strata/platform/clock.hpp"
#include "strata/platform/memory.hpp"
#include "strata/platform/output.hpp"
#include "strata/platform/page.hpp"
#include "strata/platform/process.hpp"
#include "strata/platform/random.hpp"
#include "strata/platform/thread.hpp"

#include "strata/top/malloc_heap.hpp"
#include "strata/top/memory_account.hpp"
#include "strata/top/mmap_heap.hpp"
#include "strata/top/null_heap.hpp"
#include "strata/top/segment_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/top/static_buffer_heap.hpp"

#include "strata/representation/coalesceable_heap.hpp"
#include "strata/representation/size_heap.hpp"

#include "strata/building/adapt_heap.hpp"
#include "strata/building/bounded_freelist_heap.hpp"
#include "strata/building/chunk_heap.hpp"
#include "strata/building/coalesce_heap.hpp"
#include "strata/building/coalescing_regions.hpp"
#include "strata/building/dllist.hpp"
#include "strata/building/freelist_heap.hpp"
#include "strata/building/size_class_page.hpp"
#include "strata/building/sllist.hpp"

#include "strata/combining/fine_size_classes.hpp"
#include "strata/combining/hybrid_heap.hpp"
#include "strata/combining/seg_heap.hpp"
#include "strata/combining/select_mmap_heap.hpp"
#include "strata/combining/size_classes.hpp"
#include "strata/combining/strict_seg_heap.hpp"
#include "strata/combining/threshold_heap.hpp"

#include "strata/general/kingsley_coalesce_heap.hpp"
#include "strata/general/kingsley_heap.hpp"
#include "strata/general/lea_heap.hpp"
#include "strata/general/strata_heap.hpp"
#include "strata/general/strata_secure_heap.hpp"

#include "strata/hardening/canary_heap.hpp"
#include "strata/hardening/checked_header_heap.hpp"
#include "strata/hardening/concepts.hpp"
#include "strata/hardening/corruption.hpp"
#include "strata/hardening/encoded_links.hpp"
#include "strata/hardening/quarantine_heap.hpp"
#include "strata/hardening/secret.hpp"

#include "strata/utility/ansi_wrapper.hpp"
#include "strata/utility/debug_heap.hpp"
#include "strata/utility/fork_safe_heap.hpp"
#include "strata/utility/locked_heap.hpp"
#include "strata/utility/per_class_heap.hpp"
#include "strata/utility/pmr_resource.hpp"
#include "strata/utility/profile_heap.hpp"
#include "strata/utility/stl_allocator.hpp"
#include "strata/utility/throw_exception_heap.hpp"
#include "strata/utility/trace_heap.hpp"
#include "strata/utility/unique_heap.hpp"

#include "strata/threads/pho_thread_heap.hpp"
#include "strata/threads/thread_heap.hpp"

#include "strata/strata_heap/accounted_segments.hpp"
#include "strata/strata_heap/delayed_purge.hpp"
#include "strata/strata_heap/heap_pool.hpp"
#include "strata/strata_heap/heap_registry.hpp"
#include "strata/strata_heap/huge_chunk_cache.hpp"
#include "strata/strata_heap/huge_object_heap.hpp"
#include "strata/strata_heap/large_span_heap.hpp"
#include "strata/strata_heap/medium_tier.hpp"
#include "strata/strata_heap/page_queues.hpp"
#include "strata/strata_heap/segment_cache.hpp"
#include "strata/strata_heap/segment_slots.hpp"
#include "strata/strata_heap/span_arena.hpp"
#include "strata/strata_heap/strata_tunables.hpp"
#include "strata/strata_heap/thread_bound_heap.hpp"
#include "strata/strata_heap/tier_regions.hpp"
#include "strata/strata_heap/types.hpp"

#include "strata/special/obstack_heap.hpp"
#include "strata/special/xalloc_heap.hpp"
#include "strata/special/zone_heap.hpp"

#include "strata/reap/chunk_cache.hpp"
#include "strata/reap/clear_optimized_heap.hpp"
#include "strata/reap/nested_heap.hpp"
#include "strata/reap/reap.hpp"
#include "strata/reap/region_heap.hpp"

#include "strata/shim/cxx_runtime.hpp"
#include "strata/shim/entry_points.hpp"
#include "strata/shim/malloc_shim.hpp"
#include "strata/shim/malloc_stats.hpp"
#include "strata/shim/operator_new.hpp"
#include "strata/shim/process_heap.hpp"
