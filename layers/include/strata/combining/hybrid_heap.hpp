// HybridHeap: small requests (n <= Threshold) go to one heap, big ones to another; e.g. a
// fast segregated heap for small objects and one mapping per big object.
//
// HybridHeap is the big heap (it inherits BigHeap) and holds the small heap as a member.
// free(p) does not know which heap made p, so it asks the object: getSize(p) <= Threshold
// means small. That needs two promises from the pair, stated in HybridCompatible
// (strata/concepts.hpp):
//  1. BigHeap::getSize reads the size of any object, including the small heap's: both keep the
//     usable size in the object itself, in the same header word (strata/detail/header.hpp),
//     as SizeHeap and MmapHeap do. The concept checks what the compiler can see of this: both
//     getSize are static, i.e. they read the object alone, not the heap's state. It cannot
//     see the meaning of the word: CoalesceableHeap keeps a block size there (usable + 8), so
//     a coalescing heap does not pair with a SizeHeap or MmapHeap side here; route those by
//     the mapped flag with SelectMmapHeap instead, as LeaHeap does;
//  2. the small heap never rounds a request <= Threshold above Threshold (a KingsleyHeap with
//     a power-of-two Threshold, say), while the big heap's getSize is >= the request and so
//     > Threshold. This one is the composer's to keep.
// Fast path: one compare on malloc; one header load and a compare on free.
#pragma once
#include <cstddef>

#include "strata/concepts.hpp"

namespace strata {

template <std::size_t Threshold, class SmallHeap, class BigHeap>
  requires HybridCompatible<SmallHeap, BigHeap>
class HybridHeap : public BigHeap {
  static constexpr bool kAccounted = AccountedHeap<SmallHeap> && AccountedHeap<BigHeap>;

 public:
  static constexpr std::size_t Alignment =
      SmallHeap::Alignment < BigHeap::Alignment ? SmallHeap::Alignment : BigHeap::Alignment;

  using BigHeap::BigHeap;
  HybridHeap() = default;
  HybridHeap(const HybridHeap&) = delete;
  HybridHeap& operator=(const HybridHeap&) = delete;

  void* malloc(std::size_t n) noexcept {
    void* p = n <= Threshold ? small_.malloc(n) : BigHeap::malloc(n);
    if constexpr (kAccounted) notePeak();
    return p;
  }

  void free(void* p) noexcept {
    if (p == nullptr) return;
    if (BigHeap::getSize(p) <= Threshold) {
      small_.free(p);
    } else {
      BigHeap::free(p);
    }
  }

  static std::size_t getSize(void* p) noexcept { return p ? BigHeap::getSize(p) : 0; }

  void clear() noexcept
    requires ClearableHeap<SmallHeap> && ClearableHeap<BigHeap>
  {
    small_.clear();
    BigHeap::clear();
  }

  // What both heaps hold from the system now.
  std::size_t bytesHeld() const noexcept
    requires(kAccounted)
  {
    return small_.bytesHeld() + BigHeap::bytesHeld();
  }

  // The peak of the sum (not the sum of the two peaks). Top heaps only grow inside a malloc,
  // so sampling after each malloc sees every peak.
  std::size_t peakBytesHeld() const noexcept
    requires(kAccounted)
  {
    return peak_;
  }

  SmallHeap& small() noexcept { return small_; }

 private:
  void notePeak() noexcept {
    const std::size_t now = bytesHeld();
    if (now > peak_) peak_ = now;
  }

  SmallHeap small_;
  std::size_t peak_ = 0;
};

}  // namespace strata
