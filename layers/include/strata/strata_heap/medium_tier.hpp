// MediumTier: a thread heap's medium requests (classes of From..To bytes) as best-fit blocks
// in coalescing regions of its own, in front of PageQueues, which keeps the other classes.
//
// Why: size-class pages keep a freed block for its own class, so a program that moves from
// one mix of medium sizes to another strands the first phase's pages, each held by a few
// survivors (interpreters, editors). Here blocks of every medium size share regions
// (CoalescingRegions: boundary tags, freed neighbours joined), so freed memory serves any
// medium size.
//
// Layout: a region is a run of RegionSlots slots taken from Super like a page; its page
// descriptor is marked kRegionClass and holds no blocks of its own. The fast paths are
// PageQueues' unchanged:
//   - malloc pops from the class's front cache: a page descriptor of this layer, installed as
//     the class's current page, whose free list holds blocks of that class;
//   - the owner's free pushes onto the region descriptor's free list, and another thread's
//     free onto its thread-free list (one CAS; a region is never parked). The descriptor's
//     `used` counts down from kDrainEvery, so every kDrainEvery frees by the owner take the
//     slow path (freeLocalSlow) and the region's pending blocks are taken in.
// Slow path (refill of a medium class, under the owner's lock): every region's pending
// blocks go to the front cache of their class while it has room (limit), else back into
// their region, joined with free neighbours; then the class's cache, then a batch from the
// bins, the regions' tops and, after the caches are emptied into the regions, a new region.
// A region that empties goes back to Super (the last one is kept). tidy and purgeAll (thread
// exit, trim, sweeps of orphans) empty the caches, release empty regions and drop the pages
// above each region's top.
//
// Aligned requests of medium classes are placed in a block with a free lead (startAt), so
// every address handed out is a block's start.
#pragma once
#include <cstddef>
#include <cstdint>

#include "strata/building/coalescing_regions.hpp"
#include "strata/concepts.hpp"
#include "strata/detail/align.hpp"
#include "strata/platform/memory.hpp"
#include "strata/platform/page.hpp"

namespace strata {

template <SizeClasses Classes, class Super, std::size_t From, std::size_t To, std::size_t RegionSlots>
class MediumTier : public Super {
 public:
  using Page = typename Super::Page;
  using Segment = typename Super::Segment;
  static constexpr unsigned FirstClass = Classes::size2class(From);
  static constexpr unsigned LastClass = Classes::size2class(To);
  static constexpr unsigned TierClasses = LastClass - FirstClass + 1;
  static constexpr std::uint16_t kRegionClass = 0xffff;
  static_assert(Classes::class2size(FirstClass) == From && Classes::class2size(LastClass) == To);
  static_assert(RegionSlots < Super::Slots, "a region fits in a segment beside its header");

  template <class... A>
  explicit MediumTier(A&&... a) noexcept : Super(static_cast<A&&>(a)...) {
    for (unsigned i = 0; i < TierClasses; ++i) Super::setFront(FirstClass + i, &front_[i + 1]);
    setLimits(true);
  }

  static constexpr bool inTier(unsigned c) noexcept { return c >= FirstClass && c <= LastClass; }
  // Whether memalign of class c comes from this layer (mallocAligned).
  static constexpr bool placesAligned(unsigned c) noexcept { return inTier(c); }

  static bool isTierPage(const Page* page) noexcept { return page->sizeClass == kRegionClass; }

  // The owner frees p, a block of one of its regions: into the front cache of its class
  // while that has room (then true); else the caller pushes it onto its region.
  // A block's label is its class's index + 1, its front's (0: an aligned block, whose front
  // holds nothing); a front's capacity is its limit (0 while shedding).
  bool cacheFree(void* p) noexcept {
    Page& f = front_[Regions::labelOf(p)];
    if (cached(f) >= f.capacity) return false;
    f.pushLocal(p);
    return true;
  }

  // Usable bytes from p (handed out from page) to the end of its block.
  static std::size_t usableFrom(const Page* page, const void* p) noexcept {
    if (page->sizeClass == kRegionClass) [[unlikely]] return CoalescingRegions::usable(p);
    return Super::usableFrom(page, p);
  }

  // The current page of class c is dry (the front cache, for a medium class).
  void* refill(unsigned c, bool& fresh) noexcept {
    if (!inTier(c)) {
      void* b = Super::refill(c, fresh);
      if (limitsCut_ && !Super::shedding()) setLimits(true);
      return b;
    }
    fresh = false;
    Super::endShedding();
    if (limitsCut_ && !Super::shedding()) setLimits(true);
    takeInPending();
    maybePurgeTier();
    Page& f = front(c);
    if (void* b = f.pop()) return b;
    const std::size_t size = Classes::class2size(c);
    void* b = take(size);
    if (b != nullptr) Regions::setLabel(b, c - FirstClass + 1);
    settle();
    return b;
  }

  // The owner's free took the slow path: a region's countdown ran out, or a page's.
  // While the heap is over its allowance (shedding), the tier keeps nothing either.
  void freeLocalSlow(Page* page) noexcept {
    if (page->sizeClass == kRegionClass) takeIn(page);
    else Super::freeLocalSlow(page);
    if (Super::shedding()) shed();
    maybePurgeTier();
    settle();
  }

  // Another thread's sweep, under the owner's lock: free blocks due are purged too.
  void purgeIfDue(std::uint64_t now) noexcept {
    if (tierDue_ != kNever && now >= tierDue_) purgeTier(now);
    Super::purgeIfDue(now);
  }

  // n bytes (need >= n + align - 16, as ThreadBoundHeap asks) whose address is aligned to
  // align, from the regions; under the owner's lock.
  void* mallocAligned(std::size_t align, std::size_t need) noexcept {
    void* b = take(need + CoalescingRegions::MinBlock);
    if (b == nullptr) return nullptr;
    auto q = detail::align_up(reinterpret_cast<std::uintptr_t>(b), align);
    if (q == reinterpret_cast<std::uintptr_t>(b)) return b;
    if (q - reinterpret_cast<std::uintptr_t>(b) < CoalescingRegions::MinBlock) q += align;
    Page* page = pageOf(b);
    void* aligned = bins_.startAt(regionOf(page), b, reinterpret_cast<void*>(q));
    settle();
    return aligned;
  }

  void tidy(Decommit how = Decommit::Now) noexcept {
    shrink(how);
    Super::tidy(how);
  }
  void purgeAll(Decommit how) noexcept {
    shrink(how);
    Super::purgeAll(how);
  }

  // Bytes in the bins and in the front caches (tests, statistics).
  std::size_t tierFreeBytes() const noexcept { return bins_.freeBytes() + cachedBytes(); }
  std::size_t tierRegions() const noexcept { return regionCount_; }

 private:
  using Regions = CoalescingRegions;
  using Region = Regions::Region;
  static constexpr std::uint32_t kDrainEvery = 16;
  static constexpr std::size_t kPurgeMin = 2 * platform::kPageSize;
  static constexpr std::uint64_t kNever = ~std::uint64_t{0};
  static constexpr std::size_t kCacheBytes = std::size_t{2} << 10;

  // Blocks a class's front cache holds at most: kCacheBytes of them, at most 8 (none for
  // classes above kCacheBytes). Each thread's caches hold blocks no other size can use, so
  // they are kept small: with 32 KiB a class, a 4-thread server held 55 % over its live
  // bytes instead of 30 %.
  static constexpr unsigned limit(unsigned c) noexcept {
    const std::size_t size = Classes::class2size(c);
    return size <= kCacheBytes / 2 ? 8u : size <= kCacheBytes ? 1u : 0u;
  }
  // The fronts' limits, or 0 while the heap sheds its free memory.
  void setLimits(bool on) noexcept {
    for (unsigned i = 0; i < TierClasses; ++i) front_[i + 1].capacity = on ? limit(FirstClass + i) : 0;
    limitsCut_ = !on;
  }

  Page& front(unsigned c) noexcept { return front_[c - FirstClass + 1]; }
  static std::uint32_t cached(const Page& f) noexcept { return 0u - f.used; }

  static Page* pageOf(void* p) noexcept {
    auto* seg = reinterpret_cast<Segment*>(reinterpret_cast<std::uintptr_t>(p) & ~(Super::SegmentSize - 1));
    return Super::pageAt(seg, p);
  }
  static Region* regionOf(const Page* page) noexcept { return reinterpret_cast<Region*>(page->start); }
  static Region* regionOfBlock(void* p) noexcept { return regionOf(pageOf(p)); }

  // A block of n usable bytes: the bins, a region's top, then a new region.
  void* take(std::size_t n) noexcept {
    if (void* b = bins_.allocate(n, &regionOfBlock)) return b;
    if (void* b = carve(n)) return b;
    if (cachedBytes() != 0) {  // what the caches hold may be joined into a fit
      flushCaches();
      if (void* b = bins_.allocate(n, &regionOfBlock)) return b;
    }
    Page* page = newRegion();
    return page == nullptr ? nullptr : carve(n);
  }

  void* carve(std::size_t n) noexcept {
    if (carving_ == nullptr || !Regions::hasRoom(regionOf(carving_), n)) {
      Page* room = nullptr;
      for (Page* p = regions_; p != nullptr; p = next(p)) {
        if (Regions::hasRoom(regionOf(p), n)) {
          room = p;
          break;
        }
      }
      if (room == nullptr) return nullptr;
      carving_ = room;
    }
    Region* r = regionOf(carving_);
    std::byte* before = r->top;
    void* b = bins_.carve(r, n);
    Super::source().addInUse(static_cast<std::size_t>(r->top - before));
    return b;
  }

  Page* newRegion() noexcept {
    typename Super::Span span;
    Page* page = Super::takeSlots(RegionSlots, 1, span);
    if (page == nullptr) return nullptr;
    page->init(span.area, span.bytes, 16, kRegionClass);
    page->reserved = 1;  // looks like a large class's page: ThreadBoundHeap's check of those sends its frees here
    page->used = 1;
    page->pinned = false;
    page->inFullList = false;
    page->zeroTail = false;
    page->reclaimNext = nullptr;
    Regions::makeRegion(span.area, span.bytes);
    page->prev = nullptr;
    page->next = regions_;
    if (regions_ != nullptr) regions_->prev = page;
    regions_ = page;
    ++regionCount_;
    carving_ = page;
    return page;
  }

  // Region page is empty: back to Super, unless it is the last one (keepLast).
  void dropIfEmpty(Page* page, bool keepLast) noexcept {
    Region* r = regionOf(page);
    if (!Regions::isEmpty(r) || (keepLast && regionCount_ == 1)) return;
    if (page->free != nullptr || (page->threadFree.load(std::memory_order_acquire) & ~Page::kStateMask) != 0)
      return;  // stray frees wait to be taken in
    if (page->prev != nullptr) page->prev->next = page->next; else regions_ = next(page);
    if (page->next != nullptr) page->next->prev = page->prev;
    page->next = page->prev = nullptr;
    --regionCount_;
    if (carving_ == page) carving_ = nullptr;
    Super::source().commit(Regions::uncut(r));  // its slots go back counted whole
    Super::releasePage(page);
  }

  // Gives block b of region page back to the region.
  void giveBack(Page* page, void* b) noexcept {
    Region* r = regionOf(page);
    std::byte* before = r->top;
    if (bins_.release(r, b)) {
      Super::source().subInUse(static_cast<std::size_t>(before - r->top));
      dropIfEmpty(page, !Super::shedding());
      return;
    }
    if (r->top != before) Super::source().subInUse(static_cast<std::size_t>(before - r->top));
  }

  // A freed block goes to its class's cache while that has room, else to its region.
  void cacheOrGiveBack(Page* page, void* b) noexcept {
    if (!Regions::plausible(regionOf(page), b)) return;  // not a block in use: ignored
    if (!cacheFree(b)) giveBack(page, b);
  }

  // Takes in the blocks freed into one region (by the owner, by other threads).
  void takeIn(Page* page) noexcept {
    auto* list = page->free;
    page->free = nullptr;
    const std::uintptr_t remote = page->threadFree.exchange(0, std::memory_order_acquire);
    auto* others = reinterpret_cast<typename Page::Block*>(remote & ~Page::kStateMask);
    for (auto* l : {list, others}) {
      while (l != nullptr) {
        auto* following = l->next;
        cacheOrGiveBack(page, l);
        l = following;
      }
    }
    resetCountdown(page);
  }

  // The owner's next frees into the region that take the slow path: after kDrainEvery, or
  // sooner when fewer blocks are out, so the free of its last block finds it empty.
  static void resetCountdown(Page* page) noexcept {
    const std::size_t live = regionOf(page)->liveBlocks;
    page->used = live == 0 ? 1u : live < kDrainEvery ? static_cast<std::uint32_t>(live) : kDrainEvery;
  }

  // Free memory in the regions beyond the allowance (the pages' own: STRATA_DIRTY_SLOTS
  // slots and 1/8 of the regions) is purged once it has waited the purge delay.
  void maybePurgeTier() noexcept {
    const std::size_t allowance = (Super::source().tunables().dirtySlots + regionCount_ * RegionSlots / 8) * Super::SlotSize;
    if (bins_.committedFree() <= allowance) {
      tierDue_ = kNever;
      return;
    }
    const std::uint64_t now = Super::source().nowMs();
    if (tierDue_ == kNever) tierDue_ = now + Super::source().tunables().purgeDelayMs;
    else if (now >= tierDue_) purgeTier(now);
  }

  void purgeTier(std::uint64_t) noexcept {
    std::size_t dropped = bins_.purgeFree(kPurgeMin, Decommit::Lazy);
    for (Page* p = regions_; p != nullptr; p = next(p)) dropped += Regions::purgeTop(regionOf(p), Decommit::Lazy);
    Super::source().uncommit(dropped);
    tierDue_ = kNever;
  }

  // Books: bytes counted as committed again by the regions.
  void settle() noexcept {
    if (const std::size_t n = bins_.takeRecommitted()) Super::source().commit(n);
  }

  // Over the allowance: pending blocks taken in, the caches emptied, every empty region
  // released.
  void shed() noexcept {
    if (!limitsCut_) setLimits(false);
    takeInPending();
    flushCaches();
    dropEmpty(false);
  }

  void dropEmpty(bool keepLast) noexcept {
    for (Page* p = regions_; p != nullptr;) {
      Page* following = next(p);
      dropIfEmpty(p, keepLast);
      p = following;
    }
  }

  void takeInPending() noexcept {
    for (Page* p = regions_; p != nullptr;) {
      Page* following = next(p);
      if (p->free != nullptr || p->threadFree.load(std::memory_order_relaxed) != 0) takeIn(p);
      p = following;
    }
  }

  std::size_t cachedBytes() const noexcept {
    std::size_t total = 0;
    for (unsigned i = 0; i < TierClasses; ++i)
      total += std::size_t{0u - front_[i + 1].used} * Classes::class2size(FirstClass + i);
    return total;
  }

  void flushCaches() noexcept {
    for (Page& f : front_) {
      while (void* b = f.pop()) giveBack(pageOf(b), b);
    }
  }

  // Lazy (thread exit): pending blocks taken in and empty regions released, the caches kept
  // warm for the thread that adopts the heap. Now (trim, an orphan's sweep): everything goes
  // back to the regions, empty regions to Super, and the whole pages of free blocks and
  // above each top are decommitted.
  void shrink(Decommit how) noexcept {
    takeInPending();
    if (how == Decommit::Now) flushCaches();
    dropEmpty(how != Decommit::Now);
    settle();
    if (how != Decommit::Now) return;
    std::size_t dropped = bins_.purgeFree(kPurgeMin, how);
    for (Page* p = regions_; p != nullptr; p = next(p)) dropped += Regions::purgeTop(regionOf(p), how);
    Super::source().uncommit(dropped);
  }

  static Page* next(Page* p) noexcept { return static_cast<Page*>(p->next); }

  Regions bins_;
  Page front_[TierClasses + 1];  // [0]: none (aligned blocks); then per medium class its
                                // cached blocks (count: 0 - used; limit: capacity)
  Page* regions_ = nullptr;  // the region pages, linked through next/prev
  Page* carving_ = nullptr;  // the region whose top new blocks come from first
  std::size_t regionCount_ = 0;
  bool limitsCut_ = false;          // the fronts' limits are 0 (shedding)
  std::uint64_t tierDue_ = kNever;  // free blocks over the allowance are purged then (ms)
};

}  // namespace strata
