// A user's heap header for strata_add_malloc_library(... HEADERS my_heap.hpp
// INCLUDE_DIRECTORIES ...): a thread-safe Kingsley heap whose memory comes from mmap.
#pragma once
#include "strata/general/kingsley_heap.hpp"
#include "strata/top/mmap_heap.hpp"
#include "strata/utility/locked_heap.hpp"

namespace consumer {
using MmapKingsley = strata::LockedHeap<strata::SpinLock, strata::KingsleyHeap<strata::MmapHeap>>;
}  // namespace consumer
