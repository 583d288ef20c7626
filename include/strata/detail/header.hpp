// The one-word object header shared by SizeHeap, CoalesceableHeap and MmapHeap.
//
// The machine word just below an object holds its usable size. Because every size is a
// multiple of 16, the low four bits are free for flags. Keeping one format lets routers
// such as SelectMmapHeap ask "was this object mapped?" without knowing which layer made it.
#pragma once
#include <cstddef>

namespace strata::detail {

inline constexpr std::size_t kFlagInUse = 1;    // CoalesceableHeap: this block is allocated
inline constexpr std::size_t kFlagMmapped = 2;  // MmapHeap: this object is its own mapping
inline constexpr std::size_t kFlagMask = 15;

inline std::size_t& header_word(void* p) noexcept {
  return *(reinterpret_cast<std::size_t*>(p) - 1);
}

}  // namespace strata::detail
