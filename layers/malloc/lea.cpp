// libstrata-lea.so: malloc over LeaHeap (dlmalloc as layers: quick lists, best fit with
// coalescing over boundary tags, mappings for large requests), with realloc in place and
// malloc_trim (LeaMallocHeap), made thread-safe and fork-safe by one lock (ForkSafeHeap).
// Its contiguous memory is a 64 GiB reservation grown like a program break (SbrkHeap),
// which never calls malloc.
#include "lea_malloc_heap.hpp"
#include "strata/shim/malloc_shim.hpp"
#include "strata/utility/fork_safe_heap.hpp"

namespace {

using LeaShim = strata::MallocShim<
    strata::ForkSafeHeap<strata::LeaMallocHeap<strata::SbrkHeap<std::size_t{64} << 30>>>>;

}  // namespace

STRATA_DEFINE_MALLOC(LeaShim);
