// CoalesceHeap: splitting and immediate coalescing, over a free store with boundary tags.
//
// malloc takes a block from the parent (a SegHeap of free blocks over CoalesceableHeap, say)
// and, when the block is bigger than the request by at least a minimum block, splits off the
// rest and frees it back to the store. free merges the object with its free neighbours,
// taking them out of the store first, and stores the merged block. So no two free blocks are
// ever adjacent, and memory freed at one size is reused for any other.
#pragma once
#include <concepts>
#include <cstddef>

#include "strata/concepts.hpp"

namespace strata {

template <CoalescingStore Super>
class CoalesceHeap : public Super {
 public:
  static constexpr std::size_t Alignment = Super::Alignment;

  using Super::Super;

  // A block from the store, trimmed to the request. Cost: the store's malloc, a header
  // store, and a compare (plus a split and a store free when the block is too big).
  void* malloc(std::size_t n) noexcept { return carve(Super::malloc(n), n); }

  // Like malloc, but only from memory the store already holds free: nullptr rather than
  // growing. For a layer that wants to try other memory before the heap grows.
  void* mallocFromBins(std::size_t n) noexcept
    requires requires(Super& s) { { s.mallocFromBins(n) } -> std::same_as<void*>; }
  {
    return carve(Super::mallocFromBins(n), n);
  }

  // Merges p with a free predecessor and a free successor, then stores the result.
  // Cost: four header loads and two tests, plus a remove and a merge per free neighbour.
  void free(void* p) noexcept {
    if (p == nullptr) return;
    if (Super::isPrevFree(p)) {
      void* before = Super::prev(p);
      Super::remove(before);
      Super::merge(before, p);
      p = before;
    }
    if (Super::isNextFree(p)) {
      void* after = Super::next(p);
      Super::remove(after);
      Super::merge(p, after);
    }
    Super::markFree(p);
    Super::free(p);
  }

 private:
  // Marks the block in use and frees whatever exceeds the request by a whole block. The
  // remainder needs no merging: its successor was the successor of a block that was either
  // free (so, coalesced, it has no free neighbour) or fresh from the parent (a fence).
  void* carve(void* p, std::size_t n) noexcept {
    if (p == nullptr) return nullptr;
    Super::markInUse(p);
    if (void* rest = Super::split(p, Super::usableFor(n))) {
      Super::markFree(rest);
      Super::free(rest);
    }
    return p;
  }
};

}  // namespace strata
