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
// descriptor is marked kRegionClass and reserved == 1 (as a large class's page), so
// ThreadBoundHeap's test for those sends its frees here at no cost to small blocks.
//   - malloc pops from the class's front cache: a page descriptor of this layer, installed
//     as the class's current page (PageQueues::setFront), whose free list holds blocks of
//     that class. PageQueues' fast path, unchanged.
//   - The owner's free puts the block in the front cache its tag's label names while that
//     has room (its capacity: 8 blocks for classes up to 1 KiB, one up to 2 KiB, none above,
//     and none while the heap sheds memory); else it pushes it onto the region descriptor's
//     free list, whose `used` counts down to the slow path (freeLocalSlow) after kDrainEvery
//     frees, or fewer when fewer blocks are out, so the free of a region's last block finds
//     it empty. Another thread's free pushes onto the thread-free list of the descriptor of
//     the block's slot (one CAS; a region is never parked), and the first block on a list
//     marks the region for the owner's next refill. TierRegions (tier_regions.hpp) keeps
//     the regions, those lists and the marks.
// Slow path (a refill of a medium class, under the owner's lock): every region's pending
// blocks go to their front cache while it has room, else back into their region, joined
// with free neighbours; then the class's cache, then one block from the bins, a region's
// top, or (after the caches are emptied into the regions) a new region.
// A region that empties goes back to Super (the last one is kept, except while shedding).
// Free memory in the bins beyond an allowance is purged after the purge delay; tidy and
// purgeAll (thread exit, trim, sweeps of orphans) take pending blocks in and release empty
// regions, and with platform::Decommit::Now also empty the caches and decommit the whole pages of
// free blocks and above each region's top.
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
#include "strata/strata_heap/tier_regions.hpp"

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

  // The owner's free of p when its cache is full: onto its region's list, the region marked
  // for the next refill; true when the region's countdown ran out (then freeLocalSlow).
  bool pendLocal(Page* page, void* p) noexcept {
    regions_.markLocal(page);
    return Super::pushLocal(page, p);
  }

  // Any other thread's free of p: one CAS onto the thread-free list of the descriptor of
  // the slot p is in, the region marked for the owner's next refill (TierRegions).
  static void freeRemoteTier(MediumTier* owner, Page* page, void* p) noexcept {
    owner->regions_.freeRemote(page, slotListOf(page, p), p);
  }

  // Usable bytes from p (handed out from page) to the end of its block.
  static std::size_t usableFrom(const Page* page, const void* p) noexcept {
    if (isTierPage(page)) [[unlikely]] return CoalescingRegions::usable(p);
    return Super::usableFrom(page, p);
  }

  // The current page of class c is dry (the front cache, for a medium class).
  void* refill(unsigned c, bool& fresh) noexcept {
    if (!inTier(c)) {
      void* b = Super::refill(c, fresh);
      resumeCaching();
      return b;
    }
    Super::endShedding();
    resumeCaching();
    takeInMarked();
    maybePurgeTier();
    Page& f = front(c);
    fresh = false;
    if (void* b = f.pop()) return b;
    const std::size_t size = Classes::class2size(c);
    void* b = take(size, &fresh);
    if (b != nullptr) Regions::setLabel(b, c - FirstClass + 1);
    settle();
    return b;
  }

  // The owner's free took the slow path: a region's countdown ran out, or a page's.
  // While the heap is over its allowance (shedding), the tier keeps nothing either: its
  // caches are emptied and cut to 0, and every region that empties goes back. And when the
  // regions' own free memory passes their allowance, the caches are emptied and cut until
  // the next refill, so a thread that freed its medium blocks and went quiet does not keep
  // a cached block, and with it a region, in most of its regions.
  void freeLocalSlow(Page* page) noexcept {
    if (isTierPage(page)) {
      takeIn(page);
      Super::shedIfOverAllowance();  // a region it gave back may have passed the allowance
    } else {
      Super::freeLocalSlow(page);
    }
    if (!limitsCut_ && bins_.committedFree() > allowance()) cutCaches();
    if (Super::shedding() && !shedDone_) shed();
    maybePurgeTier();
    settle();
  }

  // Another thread's sweep, under the owner's lock: free blocks due are purged too.
  void purgeIfDue(std::uint64_t now) noexcept {
    if (tierDue_ != kNever && now >= tierDue_) purgeTier();
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

  void tidy(platform::Decommit how = platform::Decommit::Now) noexcept {
    shrink(how);
    Super::tidy(how);
  }
  void purgeAll(platform::Decommit how) noexcept {
    shrink(how);
    Super::purgeAll(how);
  }

 private:
  using Regions = CoalescingRegions;
  using Region = Regions::Region;
  using List = TierRegions<Page, RegionSlots>;
  static constexpr std::uint32_t kDrainEvery = 16;
  static constexpr std::size_t kPurgeMin = 2 * platform::kPageSize;
  static constexpr std::uint64_t kNever = ~std::uint64_t{0};
  static constexpr std::size_t kCacheBytes = std::size_t{2} << 10;

  // Blocks a class's front cache holds at most: 8 up to half of kCacheBytes, one up to
  // kCacheBytes, none above. Each thread's caches hold blocks no other size can use (what
  // the tier is for), so they are kept for the classes whose malloc cost counts most
  // against the bytes the program then touches; docs/layers/strata-heap.md has how the
  // sizes were chosen.
  static constexpr unsigned limit(unsigned c) noexcept {
    const std::size_t size = Classes::class2size(c);
    return size <= kCacheBytes / 2 ? 8u : size <= kCacheBytes ? 1u : 0u;
  }
  // The fronts' limits, or 0 while the heap sheds its free memory.
  void setLimits(bool on) noexcept {
    for (unsigned i = 0; i < TierClasses; ++i) front_[i + 1].capacity = on ? limit(FirstClass + i) : 0;
    limitsCut_ = !on;
  }
  // The regions hold more free memory than their allowance: the caches go back into them
  // and take nothing until the next refill. At most once per purge delay, so a heap whose
  // free memory hovers at the allowance keeps its caches.
  void cutCaches() noexcept {
    const std::uint64_t now = Super::source().nowMs();
    if (now < nextCut_) return;
    nextCut_ = now + Super::source().tunables().purgeDelayMs;
    setLimits(false);
    flushCaches();
  }

  // A refill: once the heap no longer sheds, the caches take blocks again.
  void resumeCaching() noexcept {
    if (Super::shedding()) return;
    shedDone_ = false;
    if (limitsCut_) setLimits(true);
  }


  Page& front(unsigned c) noexcept { return front_[c - FirstClass + 1]; }
  static std::uint32_t cached(const Page& f) noexcept { return 0u - f.used; }

  static Page* pageOf(void* p) noexcept {
    auto* seg = reinterpret_cast<Segment*>(reinterpret_cast<std::uintptr_t>(p) & ~(Super::SegmentSize - 1));
    return Super::pageAt(seg, p);
  }
  static Region* regionOf(const Page* page) noexcept { return reinterpret_cast<Region*>(page->start); }
  static Region* regionOfBlock(void* p) noexcept { return regionOf(pageOf(p)); }

  // A block of n usable bytes: the bins, a region's top, then a new region; zero says
  // whether it reads as zero.
  void* take(std::size_t n, bool* zero = nullptr) noexcept {
    if (void* b = bins_.allocate(n, &regionOfBlock)) return b;
    if (void* b = carve(n, zero)) return b;
    if (cachedBytes() != 0) {  // what the caches hold may be joined into a fit
      flushCaches();
      if (void* b = bins_.allocate(n, &regionOfBlock)) return b;
    }
    Page* page = newRegion();
    return page == nullptr ? nullptr : carve(n, zero);
  }

  void* carve(std::size_t n, bool* zero) noexcept {
    if (regions_.carving == nullptr || !Regions::hasRoom(regionOf(regions_.carving), n)) {
      Page* room = nullptr;
      for (Page* p = regions_.first(); p != nullptr; p = List::next(p)) {
        if (Regions::hasRoom(regionOf(p), n)) {
          room = p;
          break;
        }
      }
      if (room == nullptr) return nullptr;
      regions_.carving = room;
    }
    Region* r = regionOf(regions_.carving);
    std::byte* before = r->top;
    void* b = bins_.carve(r, n, zero);
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
    Regions::makeRegion(span.area, span.bytes, span.zero);
    regions_.add(page);
    return page;
  }

  // Region page is empty: back to Super, unless it is the last one (keepLast).
  // Returns true when the region went: its descriptor and memory are Super's from then on.
  bool dropIfEmpty(Page* page, bool keepLast) noexcept {
    Region* r = regionOf(page);
    if (!Regions::isEmpty(r) || (keepLast && regions_.count() == 1)) return false;
    if (List::hasPending(page)) return false;  // stray frees wait to be taken in
    regions_.remove(page);
    Super::source().commit(Regions::uncut(r));  // its slots go back counted whole
    Super::releasePage(page);
    return true;
  }

  // Gives block b of region page back to the region.
  // Returns true when the region emptied and went back to Super.
  bool giveBack(Page* page, void* b) noexcept {
    Region* r = regionOf(page);
    std::byte* before = r->top;
    const bool empty = bins_.release(r, b);
    if (r->top != before) Super::source().subInUse(static_cast<std::size_t>(before - r->top));
    return empty && dropIfEmpty(page, !Super::shedding());
  }

  // A freed block goes to its class's cache while that has room, else to its region;
  // true when the region went back to Super.
  bool cacheOrGiveBack(Page* page, void* b) noexcept {
    if (!Regions::plausible(regionOf(page), b)) return false;  // not a block in use: ignored
    return !cacheFree(b) && giveBack(page, b);
  }

  // The descriptor whose thread-free list takes other threads' frees of p, of region page.
  static Page* slotListOf(Page* page, const void* p) noexcept {
    Segment* seg = Super::segmentOfPage(page);
    const auto slot = (reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(seg)) >> Super::SlotShift;
    return &seg->pages[slot];
  }
  // Takes in the blocks freed into one region (by the owner, by other threads).
  void takeIn(Page* page) noexcept {
    if (List::drain(page, [&](void* b) { return cacheOrGiveBack(page, b); })) return;  // the region went
    resetCountdown(page);
  }

  // The owner's next frees into the region that take the slow path: after kDrainEvery, or
  // sooner when fewer blocks are out, so the free of its last block finds it empty.
  static void resetCountdown(Page* page) noexcept {
    const std::size_t live = regionOf(page)->liveBlocks;
    page->used = live == 0 ? 1u : live < kDrainEvery ? static_cast<std::uint32_t>(live) : kDrainEvery;
  }

  // Free memory the regions keep: as the pages do, STRATA_DIRTY_SLOTS slots and 1/8 of
  // the regions.
  std::size_t allowance() const noexcept {
    return (Super::source().tunables().dirtySlots + regions_.count() * RegionSlots / 8) * Super::SlotSize;
  }

  // Free memory in the regions beyond the allowance is purged once it has waited the purge
  // delay.
  void maybePurgeTier() noexcept {
    if (bins_.committedFree() <= allowance()) {
      tierDue_ = kNever;
      return;
    }
    const std::uint64_t now = Super::source().nowMs();
    if (tierDue_ == kNever) tierDue_ = now + Super::source().tunables().purgeDelayMs;
    else if (now >= tierDue_) purgeTier();
  }

  void purgeTier() noexcept {
    decommitFree(platform::Decommit::Lazy);
    tierDue_ = kNever;
  }

  // Decommits the whole pages of free blocks and above each region's top, and takes them
  // off the books.
  void decommitFree(platform::Decommit how) noexcept {
    std::size_t dropped = bins_.purgeFree(kPurgeMin, how);
    for (Page* p = regions_.first(); p != nullptr; p = List::next(p)) dropped += Regions::purgeTop(regionOf(p), how);
    Super::source().uncommit(dropped);
  }

  // Books: bytes counted as committed again by the regions.
  void settle() noexcept {
    if (const std::size_t n = bins_.takeRecommitted()) Super::source().commit(n);
  }

  // An episode of shedding begins: pending blocks taken in, the caches emptied and cut,
  // every empty region released. From then on the regions empty as their last blocks are
  // freed, and go.
  void shed() noexcept {
    if (!limitsCut_) setLimits(false);
    takeInPending();
    flushCaches();
    dropEmpty(false);
    shedDone_ = true;
  }

  void dropEmpty(bool keepLast) noexcept {
    regions_.forEach([&](Page* p) { dropIfEmpty(p, keepLast); });
  }

  // A refill takes in the regions marked since the last one, not every region.
  void takeInMarked() noexcept {
    regions_.forMarked([&](Page* p) { takeIn(p); });
  }

  void takeInPending() noexcept {
    regions_.forEach([&](Page* p) {
      if (List::hasPending(p)) takeIn(p);
    });
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
  void shrink(platform::Decommit how) noexcept {
    takeInPending();
    if (how == platform::Decommit::Now) flushCaches();
    dropEmpty(how != platform::Decommit::Now);
    settle();
    if (how == platform::Decommit::Now) decommitFree(how);
  }

  Regions bins_;
  Page front_[TierClasses + 1];  // [0]: none (aligned blocks); then per medium class its
                                // cached blocks (count: 0 - used; limit: capacity)
  List regions_;  // the regions, the one carved from, the ones freed into
  bool limitsCut_ = false;          // the fronts' limits are 0 (shedding, or cut)
  bool shedDone_ = false;           // this episode of shedding has begun (shed)
  std::uint64_t nextCut_ = 0;       // the caches are not cut again before (ms)
  std::uint64_t tierDue_ = kNever;  // free blocks over the allowance are purged then (ms)
};

}  // namespace strata
