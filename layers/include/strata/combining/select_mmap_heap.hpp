// SelectMmapHeap: sends requests of Threshold bytes or more to Big (a heap of mappings, such
// as MmapHeap) and the rest to Small; when Small can serve a request from free memory alone
// (BinnedHeap: mallocFromBins), a big request that fits there is served there instead, as
// glibc does, since a mapping is meant to replace growing Small, not reusing it. free and
// getSize route by the header flag that marks a mapped object (MmapHeap::isMapped), not by
// size: an object's usable size can cross the threshold by rounding alone, and the flag is
// the only thing that cannot be wrong.
//
// Small's objects must carry the shared header word without the mapped flag (SizeHeap,
// CoalesceableHeap and the layers over them do).
//
// With DynamicThreshold (glibc's rule) the threshold rises as the program shows that it
// allocates and frees large objects over and over: when a mapped object is freed whose
// usable size is at least the current threshold and at most MaxDynamicThreshold (32 MiB,
// glibc's cap), the threshold moves just past that size, so from then on requests of that
// size are served, and recycled, by Small instead of costing an mmap, page faults on fresh
// zeroed pages and a munmap each time. The threshold never falls; Threshold is where it
// starts.
#pragma once
#include <cstddef>

#include "strata/concepts.hpp"

namespace strata {

// Cost on top of the chosen heap: a compare on malloc (against a member when dynamic); a
// header load and test on free (and, freeing a mapped object, a compare).
template <std::size_t Threshold, SizedHeap Small, MappedHeap Big, bool DynamicThreshold = false>
class SelectMmapHeap : public Small {
 public:
  static constexpr std::size_t MaxDynamicThreshold = std::size_t{32} << 20;

  static constexpr std::size_t Alignment =
      Small::Alignment < Big::Alignment ? Small::Alignment : Big::Alignment;

  using Small::Small;
  SelectMmapHeap() = default;
  SelectMmapHeap(const SelectMmapHeap&) = delete;
  SelectMmapHeap& operator=(const SelectMmapHeap&) = delete;

  // Big for n >= threshold() (unless Small has a free fit), Small otherwise; Big too when
  // Small is out of memory (its reservation full, as SbrkHeap's is when it was made under an
  // address-space limit), as glibc maps memory when the break cannot grow. The Big side (a
  // system call anyway) is kept out of line so that Small's fast path inlines into the
  // caller.
  void* malloc(std::size_t n) noexcept {
    if (n >= threshold()) [[unlikely]] return mallocBig(n);
    if (void* p = Small::malloc(n)) [[likely]] return p;
    return mallocFallback(n);
  }

  // Back to whichever heap made p, as its header says; a mapped object may first raise the
  // threshold (DynamicThreshold).
  void free(void* p) noexcept {
    if (p == nullptr) return;
    if (Big::isMapped(p)) [[unlikely]] {
      freeBig(p);
    } else {
      Small::free(p);
    }
  }

  // p resized where it is by the heap that made it, when that heap can (Small's
  // reallocInPlace, Big's resizeMapping); nullptr, p untouched, when it cannot. A mapped
  // object stays mapped whatever its new size.
  void* reallocInPlace(void* p, std::size_t n) noexcept
    requires(ResizesInPlace<Small> || ResizableMappings<Big>)
  {
    if (Big::isMapped(p)) {
      if constexpr (ResizableMappings<Big>) return big_.resizeMapping(p, n);
      return nullptr;
    }
    if constexpr (ResizesInPlace<Small>) return Small::reallocInPlace(p, n);
    return nullptr;
  }

  // A mapped object grown to n bytes by moving its pages (Big's moveMapping), not copying
  // them; nullptr, p untouched, for Small's objects (unless Small can: its reallocMoving)
  // or when the system refuses.
  void* reallocMoving(void* p, std::size_t n) noexcept
    requires(ResizableMappings<Big>)
  {
    if (Big::isMapped(p)) return big_.moveMapping(p, n);
    if constexpr (requires(Small& s) { { s.reallocMoving(p, n) } -> std::same_as<void*>; })
      return Small::reallocMoving(p, n);
    return nullptr;
  }

  // The usable size, asked of the heap that made p.
  std::size_t getSize(void* p) noexcept {
    if (p == nullptr) return 0;
    return Big::isMapped(p) ? big_.getSize(p) : Small::getSize(p);
  }

  // The size from which requests are mapped: Threshold, or more once it has risen.
  std::size_t threshold() const noexcept {
    if constexpr (DynamicThreshold) {
      return threshold_;
    } else {
      return Threshold;
    }
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
  // When Small can serve from its free memory alone (BinnedHeap), that comes first, as in
  // glibc: a mapping replaces growing Small, not reusing what Small already holds free.
  [[gnu::noinline]] void* mallocBig(std::size_t n) noexcept {
    if constexpr (BinnedHeap<Small>) {
      if (void* p = Small::mallocFromBins(n)) return p;
    }
    return big_.malloc(n);
  }

  [[gnu::cold, gnu::noinline]] void* mallocFallback(std::size_t n) noexcept {
    return big_.malloc(n);
  }

  [[gnu::noinline]] void freeBig(void* p) noexcept {
    if constexpr (DynamicThreshold) {
      const std::size_t size = big_.getSize(p);
      if (size >= threshold_ && size <= MaxDynamicThreshold) threshold_ = size + 1;
    }
    big_.free(p);
  }

  Big big_;
  std::size_t threshold_ = Threshold;  // only read when DynamicThreshold
};

}  // namespace strata
