// SegmentSlots: one owner's segments, each cut into SlotSize slots, handing out runs of
// slots as pages (mimalloc's segments and spans). The segment header, in slot 0, holds a
// descriptor (Page) for the page starting at each slot and, per slot, the first slot of the
// page covering it, so any thread finds an object's page from its address: a shift and a
// byte load once the segment is known.
//
// Which free run a page takes: first a run of slots released but still committed (reusing
// them costs no page faults), in the segment whose longest free run is the shortest that
// fits; else a warm segment from the shared cache; else the same best fit among all free
// runs. Segments are filed by their longest free
// run, so a search looks at a few segments of each of at most Slots lists.
// Bookkeeping per segment: bit masks of free slots, of free slots still committed ("dirty")
// and of slots known to read as zero (fresh from the system or decommitted with Now), so
// calloc can skip zeroing them.
//
// Owner only (its caller holds the owner's lock); the static lookups are for any thread.
#pragma once
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <new>

#include "strata/detail/align.hpp"
#include "strata/detail/slot_masks.hpp"
#include "strata/platform/memory.hpp"
#include "strata/platform/page.hpp"
#include "strata/strata_heap/accounted_segments.hpp"

namespace strata {

// What SegmentSlots needs of the process-wide source (AccountedSegments + SegmentCache).
template <class S>
concept SlotSource = requires(S& s, void* p, std::size_t n, bool& warm) {
  { s.allocSegment(warm) } -> std::same_as<void*>;
  { s.cacheSegment(p, n) } -> std::same_as<void>;
  { s.decommit(p, n, platform::Decommit::Lazy) } -> std::same_as<void>;
  { s.commit(n) } -> std::same_as<void>;
  { s.cacheDue() } -> std::same_as<std::uint64_t>;
  { S::SegmentSize } -> std::convertible_to<std::size_t>;
  { S::ChunkHeaderBytes } -> std::convertible_to<std::size_t>;
};

template <SlotSource Source, class Page, unsigned SlotBits = 16>
class SegmentSlots {
 public:
  using PageType = Page;
  static constexpr unsigned SlotShift = SlotBits;
  static constexpr std::size_t SlotSize = std::size_t{1} << SlotShift;
  static constexpr std::size_t SegmentSize = Source::SegmentSize;
  static constexpr std::size_t Slots = SegmentSize / SlotSize;
  static constexpr std::uint64_t AllSlots = Slots == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << Slots) - 1;
  static_assert(Slots >= 16 && Slots <= 64, "a segment holds 16..64 slots (a 64-bit mask)");

  struct Segment {
    std::size_t chunkHeader[Source::ChunkHeaderBytes / sizeof(std::size_t)];
    std::uintptr_t kind;
    SegmentSlots* owner;
    Segment* next;  // in the owner's list of segments with this longest free run
    Segment* prev;
    std::uint64_t freeSlots;   // bit i: slot i holds no page
    std::uint64_t dirtySlots;  // bit i: slot i is free but still committed
    std::uint64_t zeroSlots;   // bit i: slot i reads as zero
    std::uint64_t dirtyAt;     // ms: when its oldest not yet decommitted release happened
    std::size_t maxRun;        // longest run of free slots
    std::uint8_t spanOf[Slots];   // slot -> first slot of the page covering it
    std::uint8_t spanLen[Slots];  // at a page's first slot: its length; 0: no page there
    Page pages[Slots];            // descriptor of the page starting at each slot
  };
  static constexpr std::size_t HeaderBytes = platform::pageAlignUp(sizeof(Segment));
  static_assert(HeaderBytes < SlotSize / 2);

  // Where a page's blocks go.
  struct Span {
    std::byte* area;
    std::size_t bytes;
    bool zero;  // every byte reads as zero
  };

  explicit SegmentSlots(Source& source) noexcept : source_(&source) {}
  SegmentSlots(const SegmentSlots&) = delete;
  SegmentSlots& operator=(const SegmentSlots&) = delete;

  Source& source() const noexcept { return *source_; }

  // ---- Lookups, any thread.

  // The segment a chunk of the source is, or nullptr when the chunk is something else.
  static Segment* segmentOf(void* chunk) noexcept {
    auto* seg = static_cast<Segment*>(chunk);
    return seg->kind == kSegmentKind ? seg : nullptr;
  }
  // The page covering p, or nullptr when p is in the header or in a slot no page holds.
  static Page* pageAt(Segment* seg, const void* p) noexcept {
    const std::uintptr_t offset = addr(p) - addr(seg);
    if (offset < HeaderBytes) [[unlikely]] return nullptr;  // else slot 0's page
    const std::size_t first = seg->spanOf[offset >> SlotShift];
    return seg->spanLen[first] != 0 ? &seg->pages[first] : nullptr;
  }
  // The segment whose header holds a page descriptor.
  static Segment* segmentOfPage(const Page* page) noexcept {
    return reinterpret_cast<Segment*>(addr(page) & ~(SegmentSize - 1));
  }
  static std::size_t slotsOf(const Page* page) noexcept {
    const Segment* seg = segmentOfPage(page);
    return seg->spanLen[page - seg->pages];
  }

  // ---- Owner only.

  std::size_t dirtySlots() const noexcept { return dirty_; }
  std::size_t usedSlots() const noexcept { return used_; }

  // A run of n slots (from slot `from` on: 1 keeps a page off the header slot) as a page
  // descriptor, with the span its blocks may use; nullptr with no memory left.
  Page* takeSlots(std::size_t n, std::size_t from, Span& span) noexcept {
    int first = -1;
    bool committed = false;
    Segment* seg = findFit(n, from, first, committed);
    // No committed run of our own: a warm segment from the shared cache beats clean slots.
    if (seg != nullptr && !committed && source_->cacheDue() != kNoneCached) first = -1;
    if (first < 0) {
      seg = newSegment();
      if (seg == nullptr) return nullptr;
      first = static_cast<int>(from);
    }
    const auto i = static_cast<std::size_t>(first);
    const std::uint64_t mask = detail::spanMask(i, n);
    const auto wasDirty = static_cast<std::size_t>(std::popcount(seg->dirtySlots & mask));
    dirty_ -= wasDirty;
    used_ += n;
    source_->commit((n - wasDirty) * SlotSize);
    span.zero = (seg->zeroSlots & mask) == mask;
    seg->freeSlots &= ~mask;
    seg->dirtySlots &= ~mask;
    seg->zeroSlots &= ~mask;
    refile(seg);
    for (std::size_t k = i; k < i + n; ++k) seg->spanOf[k] = static_cast<std::uint8_t>(i);
    seg->spanLen[i] = static_cast<std::uint8_t>(n);
    span.area = reinterpret_cast<std::byte*>(seg) + i * SlotSize;
    span.bytes = n * SlotSize;
    if (i == 0) {
      span.area += HeaderBytes;
      span.bytes -= HeaderBytes;
    }
    return &seg->pages[i];
  }

  // A page's slots become free (still committed). Returns its segment.
  Segment* releaseSlots(Page* page, std::uint64_t now) noexcept {
    Segment* seg = segmentOfPage(page);
    const auto first = static_cast<std::size_t>(page - seg->pages);
    const std::size_t n = seg->spanLen[first];
    const std::uint64_t mask = detail::spanMask(first, n);
    seg->spanLen[first] = 0;
    for (std::size_t i = first; i < first + n; ++i) seg->spanOf[i] = static_cast<std::uint8_t>(i);
    if (seg->dirtySlots == 0) seg->dirtyAt = now;
    seg->freeSlots |= mask;
    seg->dirtySlots |= mask;
    dirty_ += n;
    used_ -= n;
    refile(seg);
    return seg;
  }

  static bool isEmpty(const Segment* seg) noexcept { return seg->freeSlots == AllSlots; }

  // An empty segment leaves this owner for the source's cache, committed as it is.
  void giveAway(Segment* seg) noexcept {
    unlink(seg);
    const auto dirty = static_cast<std::size_t>(std::popcount(seg->dirtySlots));
    dirty_ -= dirty;
    seg->owner = nullptr;
    source_->cacheSegment(seg, HeaderBytes + dirty * SlotSize);
  }

  // Brings the committed free slots down to at most `keep`: empty segments go to the cache,
  // then segments' dirty slots are decommitted, one segment at a time.
  void decommitDown(std::size_t keep, platform::Decommit how) noexcept {
    for (Segment* seg = byRun_[Slots]; seg != nullptr && dirty_ > keep;) {
      Segment* next = seg->next;
      giveAway(seg);
      seg = next;
    }
    for (Segment* head : byRun_) {
      for (Segment* seg = head; seg != nullptr && dirty_ > keep; seg = seg->next)
        if (seg->dirtySlots != 0) decommitSegment(seg, how);
    }
  }

  // Decommits the dirty slots of every segment released into at or before `cutoff` (ms;
  // ~0 for all), empty ones go to the cache; returns the oldest dirtyAt left (~0: none).
  std::uint64_t decommitDirty(platform::Decommit how, std::uint64_t cutoff) noexcept {
    std::uint64_t oldestLeft = ~std::uint64_t{0};
    for (Segment* seg = byRun_[Slots]; seg != nullptr;) {
      Segment* next = seg->next;
      if (isEmpty(seg) && seg->dirtyAt <= cutoff) giveAway(seg);
      seg = next;
    }
    for (Segment* head : byRun_) {
      for (Segment* seg = head; seg != nullptr; seg = seg->next) {
        if (seg->dirtySlots == 0) continue;
        if (seg->dirtyAt > cutoff) {
          if (seg->dirtyAt < oldestLeft) oldestLeft = seg->dirtyAt;
          continue;
        }
        decommitSegment(seg, how);
      }
    }
    return oldestLeft;
  }

 private:
  static constexpr std::uintptr_t kSegmentKind = 0x5e6e5e6e;
  static constexpr std::uint64_t kNoneCached = ~std::uint64_t{0};

  static std::uintptr_t addr(const void* p) noexcept { return reinterpret_cast<std::uintptr_t>(p); }

  // The segment for a page of n slots from slot `from` on, and the run's first slot: the
  // tightest segment with such a run of still-committed free slots (no page faults), else the
  // tightest with any such free run; nullptr if none. Looks at a few segments of each
  // longest-run list, from n up.
  Segment* findFit(std::size_t n, std::size_t from, int& first, bool& committed) const noexcept {
    constexpr int kLooks = 8;
    Segment* clean = nullptr;
    int cleanFirst = -1;
    for (std::size_t run = n; run <= Slots; ++run) {
      int looks = 0;
      for (Segment* seg = byRun_[run]; seg != nullptr && looks < kLooks; seg = seg->next, ++looks) {
        if (seg->dirtySlots != 0) {
          first = detail::findRun(seg->dirtySlots, n, from);
          committed = first >= 0;
          if (committed) return seg;
        }
        if (clean == nullptr) {
          cleanFirst = detail::findRun(seg->freeSlots, n, from);
          if (cleanFirst >= 0) clean = seg;
        }
      }
      if (clean != nullptr && dirty_ < n) break;
    }
    first = cleanFirst;
    return clean;
  }

  void decommitSegment(Segment* seg, platform::Decommit how) noexcept {
    std::uint64_t d = seg->dirtySlots;
    while (d != 0) {
      const auto i = static_cast<unsigned>(std::countr_zero(d));
      const auto n = static_cast<unsigned>(std::countr_one(d >> i));
      std::byte* from = reinterpret_cast<std::byte*>(seg) + i * SlotSize;
      std::byte* to = from + std::size_t{n} * SlotSize;
      if (i == 0) from += HeaderBytes;
      source_->decommit(from, static_cast<std::size_t>(to - from), how);
      if (i == 0) source_->uncommit(HeaderBytes);
      d &= ~detail::spanMask(i, n);
    }
    if (how == platform::Decommit::Now) seg->zeroSlots |= seg->dirtySlots;
    dirty_ -= static_cast<std::size_t>(std::popcount(seg->dirtySlots));
    seg->dirtySlots = 0;
  }

  Segment* newSegment() noexcept {
    bool warm = false;
    void* chunk = source_->allocSegment(warm);
    if (chunk == nullptr) return nullptr;
    auto* seg = static_cast<Segment*>(chunk);
    if (!warm) {
      std::size_t keep[sizeof seg->chunkHeader / sizeof(std::size_t)];
      __builtin_memcpy(keep, chunk, sizeof keep);
      seg = new (chunk) Segment();
      __builtin_memcpy(seg->chunkHeader, keep, sizeof keep);
      seg->kind = kSegmentKind;
      seg->dirtySlots = 0;
      seg->zeroSlots = AllSlots;
      source_->commit(HeaderBytes);
    }
    seg->owner = this;
    seg->prev = seg->next = nullptr;
    seg->freeSlots = AllSlots;
    seg->maxRun = Slots;
    for (std::size_t i = 0; i < Slots; ++i) {
      seg->spanOf[i] = static_cast<std::uint8_t>(i);
      seg->spanLen[i] = 0;
    }
    dirty_ += static_cast<std::size_t>(std::popcount(seg->dirtySlots));
    link(seg);
    return seg;
  }

  // Refiles a segment under its longest free run after its slots changed.
  void refile(Segment* seg) noexcept {
    const std::size_t run = detail::longestRun(seg->freeSlots);
    if (run == seg->maxRun) return;
    unlink(seg);
    seg->maxRun = run;
    link(seg);
  }
  void link(Segment* seg) noexcept {
    seg->prev = nullptr;
    seg->next = byRun_[seg->maxRun];
    if (seg->next) seg->next->prev = seg;
    byRun_[seg->maxRun] = seg;
  }
  void unlink(Segment* seg) noexcept {
    if (seg->prev) seg->prev->next = seg->next;
    else if (byRun_[seg->maxRun] == seg) byRun_[seg->maxRun] = seg->next;
    if (seg->next) seg->next->prev = seg->prev;
    seg->next = seg->prev = nullptr;
  }

  Source* source_;
  Segment* byRun_[Slots + 1] = {};
  std::size_t dirty_ = 0;
  std::size_t used_ = 0;
};

}  // namespace strata
