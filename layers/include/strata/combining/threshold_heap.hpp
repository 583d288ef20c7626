// ThresholdHeap: Lea's deferred coalescing. Small objects (requests up to QuickMax bytes, or
// up to what the medium heap makes of QuickMax: 72 bytes for 64 over boundary tags) are kept
// on exact-size quick lists when freed and reused as they are, without coalescing: the
// cheapest possible path for the sizes programs allocate most. A quick-list object still
// counts as in use for the coalescing heap below, so it blocks merges while it waits.
//
// The price is fragmentation, paid back lazily: a medium request first tries the medium
// heap's free bins only; when they have nothing that fits, every quick list is flushed into
// the medium heap (which coalesces the objects with their free neighbours) and the request
// is asked again, so the heap grows only if even the flushed memory does not fit.
//
// QuickList is the type of one quick list: a FreelistHeap by default; a layer above may pass
// its own (the Reap's marks and poisons the objects it holds). It needs malloc (nullptr when
// empty), free and forget (drop everything without touching it).
#pragma once
#include <concepts>
#include <cstddef>

#include "strata/building/freelist_heap.hpp"
#include "strata/concepts.hpp"
#include "strata/detail/align.hpp"
#include "strata/top/null_heap.hpp"

namespace strata {

template <BinnedHeap Super, std::size_t QuickMax = 64,
          class QuickList = FreelistHeap<NullHeap<Super::Alignment>>>
  requires requires(QuickList& l, void* p) {
    { l.malloc(std::size_t{0}) } -> std::same_as<void*>;
    l.free(p);
    l.forget();
  }
class ThresholdHeap : public Super {
  static_assert(QuickMax >= 16 && QuickMax % 16 == 0,
                "ThresholdHeap: QuickMax must be a positive multiple of 16");

  // The usable size the medium heap gives a request of n bytes: its own usableFor when it
  // has one (CoalesceableHeap: 16k + 8), else n rounded up to 16 (at least 16).
  static constexpr std::size_t usable(std::size_t n) noexcept {
    if constexpr (requires { { Super::usableFor(n) } -> std::same_as<std::size_t>; }) {
      return Super::usableFor(n);
    } else {
      return detail::align_up(n < 16 ? 16 : n, 16);
    }
  }

  // Quick list i holds objects of usable size in [16(i+1), 16(i+2)). The medium heap's sizes
  // (usableFor and getSize alike) are all the same amount above a multiple of 16, so every
  // object on list i has exactly the usable size of the requests that map to list i.
  static constexpr std::size_t kQuickUsableMax = usable(QuickMax);
  static constexpr unsigned kQuickLists = static_cast<unsigned>(kQuickUsableMax / 16);
  static_assert(usable(0) >= 16, "ThresholdHeap: quick-list objects must hold 16 bytes");
  static constexpr unsigned listFor(std::size_t usableSize) noexcept {
    return static_cast<unsigned>(usableSize / 16) - 1;
  }

 public:
  static constexpr std::size_t Alignment = Super::Alignment;
  // The largest request the quick lists serve: the usable size the medium heap gives a
  // request of QuickMax bytes (72 over CoalesceableHeap), since every smaller request gets
  // an object no bigger.
  static constexpr std::size_t QuickListMax = kQuickUsableMax;

  using Super::Super;
  ThresholdHeap() = default;
  ThresholdHeap(const ThresholdHeap&) = delete;
  ThresholdHeap& operator=(const ThresholdHeap&) = delete;
  ~ThresholdHeap() { flush(); }

  // Small: the usable size (a few ALU ops), a quick-list pop (a load, a load, a store),
  // else the medium heap at that size. Medium: the medium heap's bins, then a flush and the
  // medium heap proper. The medium heap's paths are kept out of line, so that the
  // quick-list paths inline into the caller whole (in a memory-bound loop the shorter code
  // overlaps more cache misses: LeaHeap on bench/gp_table small-churn, 120 ms -> 80 ms).
  void* malloc(std::size_t n) noexcept {
    if (n <= kQuickUsableMax) [[likely]] {
      const std::size_t u = usable(n);
      if (void* p = quick_[listFor(u)].malloc(0)) [[likely]] return p;
      return mallocSmallMiss(u);
    }
    return mallocMedium(n);
  }

  // Small objects go onto the quick list of their usable size (a getSize, a compare and two
  // stores); the rest to the medium heap.
  void free(void* p) noexcept {
    if (p == nullptr) return;
    const std::size_t size = Super::getSize(p);
    if (size - 16 <= kQuickUsableMax - 16) [[likely]] {  // 16 <= size <= kQuickUsableMax
      quick_[listFor(size)].free(p);
      holding_ = true;
      return;
    }
    freeMedium(p);
  }

  // Hands every quick-list object to the medium heap, which coalesces it.
  void flush() noexcept {
    for (auto& list : quick_) {
      while (void* p = list.malloc(0)) Super::free(p);
    }
    holding_ = false;
  }

  // Frees everything at once: the quick lists forget their objects (without walking them:
  // they live in the memory the medium heap is about to drop), the medium heap clears.
  void clear() noexcept
    requires ClearableHeap<Super>
  {
    for (auto& list : quick_) list.forget();
    holding_ = false;
    Super::clear();
  }

 private:
  [[gnu::noinline]] void* mallocSmallMiss(std::size_t u) noexcept { return Super::malloc(u); }

  [[gnu::noinline]] void* mallocMedium(std::size_t n) noexcept {
    if (void* p = Super::mallocFromBins(n)) return p;
    if (holding_) flush();
    return Super::malloc(n);
  }

  [[gnu::noinline]] void freeMedium(void* p) noexcept { Super::free(p); }

  QuickList quick_[kQuickLists];
  bool holding_ = false;  // some quick list may hold an object
};

}  // namespace strata
