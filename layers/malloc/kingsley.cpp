// libstrata-kingsley.so: malloc over Kingsley's power-of-two segregated fits, made
// thread-safe and fork-safe by one lock (ForkSafeHeap). Requests of 128 KiB or more get
// their own mapping (MmapHeap), so large blocks go back to the system when freed instead of
// staying in a power-of-two bin; the threshold rises, as glibc's does, for sizes the program
// keeps freeing. The small objects come from a 64 GiB reservation grown like a program
// break (SbrkHeap), which never calls malloc. Kingsley cannot give memory back in place, so
// malloc_trim returns 0.
#include "strata/combining/select_mmap_heap.hpp"
#include "strata/general/kingsley_heap.hpp"
#include "strata/shim/malloc_shim.hpp"
#include "strata/top/mmap_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/utility/fork_safe_heap.hpp"

namespace {

using KingsleyMallocHeap = strata::ForkSafeHeap<
    strata::SelectMmapHeap<std::size_t{128} << 10,
                           strata::KingsleyHeap<strata::SbrkHeap<std::size_t{64} << 30>>,
                           strata::MmapHeap, true>>;
using KingsleyShim = strata::MallocShim<KingsleyMallocHeap>;

}  // namespace

STRATA_DEFINE_MALLOC(KingsleyShim);
