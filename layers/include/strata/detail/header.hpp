// The one-word object header shared by SizeHeap, CoalesceableHeap and MmapHeap.
//
// The machine word just below an object holds a size that is a multiple of 16, so its low
// four bits are free for flags. Which size it is belongs to the layer that wrote it, and
// each layer derives its object's usable size from it:
//   - SizeHeap: the usable size itself (getSize = word & ~15);
//   - MmapHeap: the usable size itself, with kFlagMmapped (the mapping is 16 bytes longer);
//   - CoalesceableHeap: the size of the whole block, from this block's header word to the
//     next one's, with kFlagInUse / kFlagPrevInUse / kFlagFirstInRun; the usable size is
//     that minus the header word (getSize = (word & ~15) - 8), because a block's payload
//     runs on over the next block's prevSize field (see coalesceable_heap.hpp).
// Keeping one format lets routers such as SelectMmapHeap ask "was this object mapped?"
// without knowing which layer made it: only MmapHeap ever sets kFlagMmapped. The same bit on
// a CoalesceableHeap block (never mapped) is kFlagParked: the Reap's quick lists mark the
// blocks they hold with it, so that a double free finds it (strata/reap/reap.hpp). No
// router ever sees a Reap's objects. kFlagFirstInRun alone (without kFlagInUse) below a
// pointer is MallocShim's aligned mark (strata/shim/malloc_shim.hpp): the size bits hold the
// distance back to the real block's start. No live SizeHeap, MmapHeap or CoalesceableHeap
// object carries it.
#pragma once
#include <cstddef>

namespace strata::detail {

inline constexpr std::size_t kFlagInUse = 1;       // CoalesceableHeap: this block is allocated
inline constexpr std::size_t kFlagMmapped = 2;     // MmapHeap: this object is its own mapping
inline constexpr std::size_t kFlagPrevInUse = 4;   // CoalesceableHeap: the block before is not
                                                   // free (its tail is payload, not prevSize)
inline constexpr std::size_t kFlagFirstInRun = 8;  // CoalesceableHeap: no block before this one
inline constexpr std::size_t kFlagParked = 2;      // Reap: a block waiting on a quick list
inline constexpr std::size_t kFlagMask = 15;

inline std::size_t& header_word(void* p) noexcept {
  return *(reinterpret_cast<std::size_t*>(p) - 1);
}

}  // namespace strata::detail
