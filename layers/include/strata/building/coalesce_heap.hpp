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
  // store, and a compare (plus a split and a store free when the block is too big). When
  // the store must grow and can grow its free last block in place (a contiguous parent),
  // that block is taken out of the store and extended: the heap grows only by what it lacks,
  // as dlmalloc grows its top chunk, instead of leaving it behind as a hole.
  void* malloc(std::size_t n) noexcept {
    if constexpr (requires(Super& s, void* p) {
                    { s.mallocFromBins(n) } -> std::same_as<void*>;
                    { s.lastFreeBlock() } -> std::same_as<void*>;
                    { s.extendLast(p, n) } -> std::same_as<void*>;
                  }) {
      if (void* p = Super::mallocFromBins(n)) return carve(p, n);
      return grow(n);
    } else {
      return carve(Super::malloc(n), n);
    }
  }

  // Like malloc, but only from memory the store already holds free: nullptr rather than
  // growing. For a layer that wants to try other memory before the heap grows.
  void* mallocFromBins(std::size_t n) noexcept
    requires requires(Super& s) { { s.mallocFromBins(n) } -> std::same_as<void*>; }
  {
    return carve(Super::mallocFromBins(n), n);
  }

  // Marks p free, merges it with a free predecessor and a free successor, then stores the
  // result. Marking first means every merge below joins free blocks, so each leaves the
  // footer and the successor's kFlagPrevInUse right. Cost: a mark (a load, three stores), a
  // flag test and a header load, plus a remove and a merge per free neighbour.
  void free(void* p) noexcept {
    if (p == nullptr) return;
    Super::markFree(p);
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
    Super::free(p);
  }

 private:
  // The store had nothing that fits: extend the free last block if there is one, else let
  // the store get a new block from its parent.
  [[gnu::noinline]] void* grow(std::size_t n) noexcept {
    if (void* last = Super::lastFreeBlock()) {
      Super::remove(last);
      if (void* p = Super::extendLast(last, n)) return carve(p, n);
      Super::free(last);  // still marked free: back into the store
    }
    return carve(Super::malloc(n), n);
  }

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
