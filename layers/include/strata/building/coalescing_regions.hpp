// CoalescingRegions: blocks of any size carved from regions the caller hands in, with
// boundary tags, freed blocks joined with free neighbours at once, and one set of bins over
// all the regions (dlmalloc's chunks, TLSF's bins).
//
// Why: a size-class page keeps a freed block for its own class, so a program whose phases
// use different sizes strands memory in pages the next phase cannot use. Here a freed block
// merges with its free neighbours and serves any size that fits, so the memory held follows
// the live bytes of all sizes together.
//
// Layout: each block has a 16-byte tag before the address handed out: the previous block's
// size (valid while that block is free) and its own size with two flag bits (in use,
// previous in use). A free block holds its bin links. A region starts with its Region
// header; blocks are carved from its top upwards, lazily (memory above the top is never
// touched), and a block freed next to the top lowers the top. So two free blocks are never
// neighbours, and no free block borders the top.
//
// Bins: 8 per power of two of the usable size (16-byte steps below 128 B), 128 in all, with
// a two-word bitmap of the non-empty ones. A request takes the first block of the first
// non-empty bin whose smallest size fits (good fit, O(1)), after a look at a few blocks of
// the bin below when its size falls between two bins' smallest; the rest of the block, if
// it can hold a block, goes back to its bin.
//
// Memory back: purgeFree decommits the whole pages inside free blocks (marked so, and
// counted as committed again when the block is reused or joined), purgeTop those above a
// region's top. The caller keeps the books: what these return was decommitted, and
// takeRecommitted says how much has been counted as committed again since the last call.
//
// Costs: allocate is a bitmap scan, an unlink and a split; release is at most two unlinks
// and an insert. Not thread-safe: its owner serialises calls.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>

#include "strata/detail/align.hpp"
#include "strata/platform/memory.hpp"
#include "strata/platform/page.hpp"

namespace strata {

class CoalescingRegions {
 public:
  // A region's header, at its first byte; blocks follow it.
  struct Region {
    std::byte* first;      // the first block's tag
    std::byte* top;        // the first byte not carved
    std::byte* end;        // the region's end
    std::byte* committed;  // bytes from here to the end are decommitted (page-aligned)
    std::byte* zeroFrom;   // bytes from here to the end were never carved and read as zero
    std::size_t liveBlocks; // blocks in use
  };

  static constexpr std::size_t TagBytes = 16;
  static constexpr std::size_t MinBlock = 32;  // a tag and two links
  static constexpr std::size_t RegionHeaderBytes = detail::align_up(sizeof(Region), std::size_t{16});
  static constexpr unsigned BinCount = 128;

  // Makes [area, area + bytes) a region with nothing carved (zero: it reads as zero, so
  // carve can say a block is). area is 16-byte aligned.
  static Region* makeRegion(std::byte* area, std::size_t bytes, bool zero = false) noexcept {
    auto* r = reinterpret_cast<Region*>(area);
    r->first = area + RegionHeaderBytes;
    r->top = r->first;
    r->end = area + (bytes & ~std::size_t{15});
    r->committed = r->end;
    r->zeroFrom = zero ? r->first : r->end;
    r->liveBlocks = 0;
    return r;
  }

  static bool isEmpty(const Region* r) noexcept { return r->liveBlocks == 0; }

  // Bytes a block needs for a request of n bytes.
  static constexpr std::size_t blockFor(std::size_t n) noexcept {
    const std::size_t b = detail::align_up(n, std::size_t{16}) + TagBytes;
    return b < MinBlock ? MinBlock : b;
  }

  // Usable bytes of the block handed out at p.
  static std::size_t usable(const void* p) noexcept { return sizeOf(tagOf(p)) - TagBytes; }

  // A block in use may carry a label (0..65535; 0 when handed out) for its owner: MediumTier
  // keeps the front cache a block belongs to there.
  static void setLabel(void* p, unsigned label) noexcept {
    Tag* t = tagOf(p);
    t->bits = (t->bits & kLowBits) | (std::size_t{label} << kLabelShift);
  }
  static unsigned labelOf(const void* p) noexcept {
    return static_cast<unsigned>(tagOf(p)->bits >> kLabelShift);
  }

  // Whether p looks like a block in use of region r (a cheap check against stray frees).
  static bool plausible(const Region* r, const void* p) noexcept {
    const auto* b = static_cast<const std::byte*>(p);
    if ((reinterpret_cast<std::uintptr_t>(b) & 15) != 0 || b < r->first + TagBytes || b >= r->top)
      return false;
    const Tag* t = tagOf(p);
    const std::size_t s = sizeOf(t);
    return (t->bits & kInUse) != 0 && s >= MinBlock && (s & 15) == 0 &&
           reinterpret_cast<const std::byte*>(t) + s <= r->top;
  }

  // A block of at least n usable bytes from the bins, or nullptr when none fits. Its region
  // is found by the caller from the address (regionOf).
  void* allocate(std::size_t n, Region* (*regionOf)(void*)) noexcept {
    const std::size_t need = blockFor(n);
    const unsigned from = ceilBin(need - TagBytes);
    Free* f = nullptr;
    unsigned bin = from;
    const unsigned below = from - 1;  // a size between two bins' smallest: look at a few there
    if (from > 0 && binSize(from) != need - TagBytes && heads_[below] != nullptr) {
      Free* g = heads_[below];
      for (int k = 0; k < 8 && g != nullptr; ++k, g = g->next) {
        if (sizeOf(&g->tag) >= need) {
          f = g;
          bin = below;
          break;
        }
      }
    }
    if (f == nullptr) {
      const int found = firstBinFrom(from);
      if (found < 0) return nullptr;
      bin = static_cast<unsigned>(found);
      f = heads_[bin];
    }
    unlink(f, bin);
    auto* t = reinterpret_cast<Tag*>(f);
    const std::size_t have = sizeOf(t);
    recommit(t);
    std::size_t s = have;
    if (have - need >= MinBlock) {
      s = need;
      auto* rest = at(t, need);
      rest->bits = (have - need) | kPrevInUse;
      at(rest, have - need)->prevSize = have - need;
      insert(rest);
    } else {
      at(t, have)->bits |= kPrevInUse;
    }
    t->bits = s | kInUse | kPrevInUse;  // a free block's predecessor is always in use
    ++regionOf(payload(t))->liveBlocks;
    return payload(t);
  }

  // A block of at least n usable bytes from region r's top, or nullptr without room; zero
  // says whether it reads as zero (never carved before in a region made zero).
  void* carve(Region* r, std::size_t n, bool* zero = nullptr) noexcept {
    const std::size_t need = blockFor(n);
    if (static_cast<std::size_t>(r->end - r->top) < need) return nullptr;
    auto* t = reinterpret_cast<Tag*>(r->top);
    if (zero != nullptr) *zero = r->top + TagBytes >= r->zeroFrom;
    r->top += need;
    if (r->top > r->zeroFrom) r->zeroFrom = r->top;
    if (r->top > r->committed) {
      auto* to = reinterpret_cast<std::byte*>(platform::pageAlignUp(reinterpret_cast<std::size_t>(r->top)));
      recommitted_ += static_cast<std::size_t>(to - r->committed);
      r->committed = to;
    }
    t->bits = need | kInUse | kPrevInUse;  // what precedes the top is in use
    ++r->liveBlocks;
    return payload(t);
  }

  // Room at r's top for a request of n bytes.
  static bool hasRoom(const Region* r, std::size_t n) noexcept {
    return static_cast<std::size_t>(r->end - r->top) >= blockFor(n);
  }

  // Frees the block at p of region r, joining it with its free neighbours (or the top).
  // Returns true when the region is now empty (its top back at its first block).
  bool release(Region* r, void* p) noexcept {
    Tag* t = tagOf(p);
    std::size_t s = sizeOf(t);
    --r->liveBlocks;
    if ((t->bits & kPrevInUse) == 0) {
      const std::size_t ps = t->prevSize;
      t = reinterpret_cast<Tag*>(reinterpret_cast<std::byte*>(t) - ps);
      unlink(reinterpret_cast<Free*>(t), binOf(ps));
      recommit(t);
      s += ps;
    }
    Tag* next = at(t, s);
    if (reinterpret_cast<std::byte*>(next) == r->top) {
      r->top = reinterpret_cast<std::byte*>(t);
      return isEmpty(r);
    }
    if ((next->bits & kInUse) == 0) {
      const std::size_t ns = sizeOf(next);
      unlink(reinterpret_cast<Free*>(next), binOf(ns));
      recommit(next);
      s += ns;
      next = at(t, s);
    }
    t->bits = s | kPrevInUse;
    next->prevSize = s;
    next->bits &= ~kPrevInUse;
    insert(t);
    return false;
  }

  // Makes the in-use block at p start at q instead (p < q, q - p >= MinBlock, 16-byte
  // aligned, inside the block): the bytes before q become a free block. For aligned
  // requests. Returns q.
  void* startAt(Region* r, void* p, void* q) noexcept {
    Tag* t = tagOf(p);
    const std::size_t s = sizeOf(t);
    const auto lead = static_cast<std::size_t>(static_cast<std::byte*>(q) - static_cast<std::byte*>(p));
    Tag* nt = at(t, lead);
    nt->bits = (s - lead) | kInUse;  // previous (the lead) is free; no label
    t->bits = lead | kInUse | (t->bits & kPrevInUse);
    nt->prevSize = lead;             // written again by release; kept valid for the lead
    ++r->liveBlocks;                 // two blocks now; release frees the lead
    release(r, p);                   // the lead: joins a free predecessor, goes to its bin
    return q;
  }

  // Decommits the whole pages inside every free block with at least minBytes of them;
  // returns the bytes decommitted.
  std::size_t purgeFree(std::size_t minBytes, platform::Decommit how) noexcept {
    std::size_t total = 0;
    for (unsigned b = floorBin(minBytes); b < BinCount; ++b) {
      for (Free* f = heads_[b]; f != nullptr; f = f->next) {
        Tag* t = &f->tag;
        if ((t->bits & kPurged) != 0) continue;
        std::byte* from;
        const std::size_t n = inside(t, from);
        if (n < minBytes) continue;
        platform::decommit(from, n, how);
        t->bits |= kPurged;
        total += n;
        purged_ += n;
      }
    }
    return total;
  }

  // Decommits the pages above region r's top; returns the bytes decommitted.
  static std::size_t purgeTop(Region* r, platform::Decommit how) noexcept {
    auto* from = reinterpret_cast<std::byte*>(platform::pageAlignUp(reinterpret_cast<std::size_t>(r->top)));
    if (from >= r->committed) return 0;
    const auto n = static_cast<std::size_t>(r->committed - from);
    platform::decommit(from, n, how);
    r->committed = from;
    return n;
  }

  // Region r is empty and going away: the bytes above its top count as committed again
  // (returned), as they did when it was made.
  static std::size_t uncut(Region* r) noexcept {
    const auto n = static_cast<std::size_t>(r->end - r->committed);
    r->committed = r->end;
    return n;
  }

  // Bytes counted as committed again (blocks reused or joined, tops raised) since the last
  // call.
  std::size_t takeRecommitted() noexcept {
    const std::size_t n = recommitted_;
    recommitted_ = 0;
    return n;
  }

  // Bytes of free blocks in the bins still committed (not purged).
  std::size_t committedFree() const noexcept { return binned_ - purged_; }

  // Bytes held in the bins (free blocks), for tests and statistics.
  std::size_t freeBytes() const noexcept {
    std::size_t total = 0;
    for (const Free* f : heads_)
      for (; f != nullptr; f = f->next) total += sizeOf(reinterpret_cast<const Tag*>(f));
    return total;
  }

  // Bins are by usable bytes (a block's size less its tag), so a block freed by one request
  // serves the next request of the same size from the first bin looked at. The bin of a
  // block of s usable bytes (the largest bin whose smallest size is at most s), and the
  // smallest size of bin b.
  static constexpr unsigned floorBin(std::size_t s) noexcept {
    if (s < 128) return static_cast<unsigned>(s >> 4);
    const unsigned e = static_cast<unsigned>(std::bit_width(s)) - 1;
    const unsigned b = 8 + (e - 7) * 8 + static_cast<unsigned>((s >> (e - 3)) & 7);
    return b < BinCount ? b : BinCount - 1;
  }
  static constexpr std::size_t binSize(unsigned b) noexcept {
    if (b < 8) return std::size_t{b} << 4;
    const unsigned e = 7 + (b - 8) / 8;
    return (std::size_t{8} + (b - 8) % 8) << (e - 3);
  }
  // The first bin all of whose blocks hold s bytes.
  static constexpr unsigned ceilBin(std::size_t s) noexcept {
    const unsigned b = floorBin(s);
    return binSize(b) == s ? b : b + 1;
  }

 private:
  struct Tag {
    std::size_t prevSize;  // the previous block's size, while it is free
    std::size_t bits;      // this block's size | kInUse | kPrevInUse
  };
  struct Free {
    Tag tag;
    Free* next;
    Free* prev;
  };
  static_assert(sizeof(Tag) == TagBytes && sizeof(Free) == MinBlock);
  static constexpr std::size_t kInUse = 1, kPrevInUse = 2, kPurged = 4, kFlags = 15;
  static constexpr unsigned kLabelShift = 48;
  static constexpr std::size_t kLowBits = (std::size_t{1} << kLabelShift) - 1;

  static unsigned binOf(std::size_t blockBytes) noexcept { return floorBin(blockBytes - TagBytes); }

  static Tag* tagOf(const void* p) noexcept {
    return reinterpret_cast<Tag*>(const_cast<std::byte*>(static_cast<const std::byte*>(p)) - TagBytes);
  }
  static void* payload(Tag* t) noexcept { return reinterpret_cast<std::byte*>(t) + TagBytes; }
  static std::size_t sizeOf(const Tag* t) noexcept { return t->bits & kLowBits & ~kFlags; }
  static Tag* at(Tag* t, std::size_t off) noexcept {
    return reinterpret_cast<Tag*>(reinterpret_cast<std::byte*>(t) + off);
  }

  // The whole pages inside free block t, clear of its tag and links: their length, and
  // where they start.
  static std::size_t inside(Tag* t, std::byte*& from) noexcept {
    const auto a = reinterpret_cast<std::size_t>(t);
    const std::size_t lo = platform::pageAlignUp(a + MinBlock);
    const std::size_t hi = (a + sizeOf(t)) & ~(platform::kPageSize - 1);
    from = reinterpret_cast<std::byte*>(lo);
    return hi > lo ? hi - lo : 0;
  }
  // A free block leaves the bins: its purged pages count as committed again.
  void recommit(Tag* t) noexcept {
    if ((t->bits & kPurged) == 0) return;
    std::byte* from;
    const std::size_t n = inside(t, from);
    recommitted_ += n;
    purged_ -= n;
    t->bits &= ~kPurged;
  }

  int firstBinFrom(unsigned from) const noexcept {
    if (from >= BinCount) return -1;
    unsigned w = from / 64;
    std::uint64_t bits = map_[w] & (~std::uint64_t{0} << (from % 64));
    while (bits == 0) {
      if (++w == 2) return -1;
      bits = map_[w];
    }
    return static_cast<int>(w * 64 + static_cast<unsigned>(std::countr_zero(bits)));
  }

  void insert(Tag* t) noexcept {
    auto* f = reinterpret_cast<Free*>(t);
    const unsigned b = binOf(sizeOf(t));
    f->prev = nullptr;
    f->next = heads_[b];
    if (f->next != nullptr) f->next->prev = f;
    heads_[b] = f;
    map_[b / 64] |= std::uint64_t{1} << (b % 64);
    binned_ += sizeOf(t);
  }
  void unlink(Free* f, unsigned b) noexcept {
    binned_ -= sizeOf(&f->tag);
    if (f->prev != nullptr) f->prev->next = f->next; else heads_[b] = f->next;
    if (f->next != nullptr) f->next->prev = f->prev;
    if (heads_[b] == nullptr) map_[b / 64] &= ~(std::uint64_t{1} << (b % 64));
  }

  Free* heads_[BinCount] = {};
  std::uint64_t map_[2] = {0, 0};
  std::size_t recommitted_ = 0;
  std::size_t binned_ = 0;  // bytes of the free blocks in the bins
  std::size_t purged_ = 0;  // bytes decommitted inside them
};

}  // namespace strata
