// SelectMmapHeap: sends requests of Threshold bytes or more to Big (a heap of mappings, such
// as MmapHeap) and the rest to Small. free and getSize route by the header flag that marks a
// mapped object (MmapHeap::isMapped), not by size: an object's usable size can cross the
// threshold by rounding alone, and the flag is the only thing that cannot be wrong.
//
// Small's objects must carry the shared header word without the mapped flag (SizeHeap,
// CoalesceableHeap and the layers over them do).
#pragma once
#include <cstddef>

#include "strata/concepts.hpp"

namespace strata {

// Cost on top of the chosen heap: a compare on malloc; a header load and test on free.
template <std::size_t Threshold, SizedHeap Small, MappedHeap Big>
class SelectMmapHeap : public Small {
 public:
  static constexpr std::size_t Alignment =
      Small::Alignment < Big::Alignment ? Small::Alignment : Big::Alignment;

  using Small::Small;
  SelectMmapHeap() = default;
  SelectMmapHeap(const SelectMmapHeap&) = delete;
  SelectMmapHeap& operator=(const SelectMmapHeap&) = delete;

  // Big for n >= Threshold, Small otherwise.
  void* malloc(std::size_t n) noexcept {
    return n >= Threshold ? big_.malloc(n) : Small::malloc(n);
  }

  // Back to whichever heap made p, as its header says.
  void free(void* p) noexcept {
    if (p == nullptr) return;
    if (Big::isMapped(p)) {
      big_.free(p);
    } else {
      Small::free(p);
    }
  }

  // The usable size, asked of the heap that made p.
  std::size_t getSize(void* p) noexcept {
    if (p == nullptr) return 0;
    return Big::isMapped(p) ? big_.getSize(p) : Small::getSize(p);
  }

  // What both heaps hold from the system now.
  std::size_t bytesHeld() const noexcept
    requires AccountedHeap<Small> && AccountedHeap<Big>
  {
    return Small::bytesHeld() + big_.bytesHeld();
  }

  // The peak of the sum cannot be derived from the two peaks; processAccount() keeps the
  // exact process-wide one, and small()/big() each heap's own.
  std::size_t peakBytesHeld() const = delete;

  // The two heaps, for their own statistics and extra operations.
  Small& small() noexcept { return *this; }
  Big& big() noexcept { return big_; }

 private:
  Big big_;
};

}  // namespace strata
