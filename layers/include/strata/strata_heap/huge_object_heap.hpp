// HugeObjectHeap: requests above the threshold (by default the largest block a segment's
// page holds), and alignments a block cannot give, get a chunk of their own from the source,
// with a 64-byte header; everything else goes to Super. As SelectMmapHeap does, free and
// getSize route by what the memory is (the chunk's kind word), not by size.
//
// Freed huge chunks are reused from a HugeChunkCache (committed, for the purge delay): a
// request takes the tightest fit, its tail beyond the request decommitted when it is much
// longer, or grows the longest one by moving its pages; realloc growth moves pages too
// (reallocMoving), never copies them, and a shrink cuts the chunk where it is. A chunk
// fresh from the system reads as zero, so calloc does not clear it; a reused one gets its
// pages back from the system (they read as zero) rather than written, so calloc never makes
// more of it resident than the program touches.
//
// Chunks of a third kind, when Super keeps them (OtherChunks: LargeSpanHeap's arenas), are
// freed, sized and resized by Super on the paths that are not the segments' own.
//
// Cost on top of Super: a compare on malloc; on free, the chunk lookup Super would need
// anyway and a compare of the chunk's kind.
#pragma once
#include <cerrno>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "strata/detail/align.hpp"
#include "strata/platform/memory.hpp"
#include "strata/platform/page.hpp"
#include "strata/strata_heap/accounted_segments.hpp"
#include "strata/strata_heap/huge_chunk_cache.hpp"

namespace strata {

// What HugeObjectHeap needs of its parent: objects up to MaxSize, frees within chunks it
// recognises, and the source's chunk calls.
template <class S>
concept ChunkedObjectHeap = requires(S& s, void* p, std::size_t n) {
  { s.malloc(n) } -> std::same_as<void*>;
  { s.mallocZeroed(n) } -> std::same_as<void*>;
  { s.mallocAlignedIn(n, n) } -> std::same_as<void*>;
  { S::ownsChunk(p) } -> std::same_as<bool>;
  { s.freeIn(p, p) } -> std::same_as<void>;
  { S::getSizeIn(p, p) } -> std::same_as<std::size_t>;
  { s.chunkOf(p) } -> std::same_as<void*>;
  { s.allocChunk(n, n, n) } -> std::same_as<void*>;
  { s.freeChunk(p) } -> std::same_as<void>;
  { s.decommit(p, n, platform::Decommit::Now) } -> std::same_as<void>;
  { S::zeroPages(p, n) } -> std::same_as<void>;
  { s.growChunk(p, n) } -> std::same_as<void*>;
  { s.shrinkChunk(p, n) } -> std::same_as<bool>;
  { S::MaxSize } -> std::convertible_to<std::size_t>;
  { S::MaxSmall } -> std::convertible_to<std::size_t>;
};

// Optional: a parent that keeps chunks of a third kind (neither its segments nor huge
// objects; LargeSpanHeap's arenas) frees, sizes and resizes objects in them.
template <class S>
concept OtherChunks = requires(S& s, const S& cs, void* p, std::size_t n) {
  { s.freeOther(p, p) } -> std::same_as<bool>;
  { cs.getSizeOther(p, p) } -> std::same_as<std::size_t>;
  { s.resizeOther(p, p, n) } -> std::same_as<bool>;
};

template <ChunkedObjectHeap Super>
class HugeObjectHeap : public Super {
 public:
  static constexpr std::size_t Alignment = 16;
  static constexpr std::size_t MaxAlign = std::size_t{1} << 30;

  template <class... A>
  explicit HugeObjectHeap(A&&... a) noexcept : Super(static_cast<A&&>(a)...) {
    // Never below MaxSmall: malloc keeps those in Super, so mallocZeroed and memalign must.
    const std::size_t t = Super::tunables().hugeThreshold;
    threshold_ = t == 0 || t > Super::MaxSize ? Super::MaxSize : t < Super::MaxSmall ? Super::MaxSmall : t;
  }

  // Requests above threshold() have a chunk of their own.
  std::size_t threshold() const noexcept { return threshold_; }

  void* malloc(std::size_t n) noexcept {
    if (n <= Super::MaxSmall || n <= threshold_) [[likely]] return Super::malloc(n);
    return mallocHuge(n, Alignment, nullptr);
  }

  // n bytes that read as zero.
  void* mallocZeroed(std::size_t n) noexcept {
    if (n <= Super::MaxSmall || n <= threshold_) [[likely]] return Super::mallocZeroed(n);
    return mallocHugeZeroed(n);
  }
  // mallocZeroed saying whether the object may lie on pages never written (a huge one:
  // always said).
  void* mallocZeroedLazy(std::size_t n, bool& lazy) noexcept
    requires requires(Super& s, bool& l) { s.mallocZeroedLazy(n, l); }
  {
    if (n <= Super::MaxSmall || n <= threshold_) [[likely]] return Super::mallocZeroedLazy(n, lazy);
    lazy = true;
    return mallocHugeZeroed(n);
  }

  void free(void* p) noexcept {
    if (p == nullptr) return;
    void* chunk = Super::chunkOf(p);
    if (chunk == nullptr) return;
    if (Super::ownsChunk(chunk)) [[likely]] {
      Super::freeIn(chunk, p);
      return;
    }
    freeHuge(chunk, p);
  }

  // Whether p lies in memory this heap manages (a segment, a span arena or a huge chunk):
  // one map lookup, nothing at p is read.
  bool owns(const void* p) const noexcept { return p != nullptr && Super::chunkOf(p) != nullptr; }

  // Usable bytes from p to the end of its block; 0 for nullptr and foreign pointers.
  std::size_t getSize(void* p) const noexcept {
    if (p == nullptr) return 0;
    void* chunk = Super::chunkOf(p);
    return chunk != nullptr ? sizeIn(chunk, p) : 0;
  }

  // n bytes aligned to align (a power of two up to 1 GiB); nullptr with errno = EINVAL for
  // a bad alignment, ENOMEM when out of memory.
  void* memalign(std::size_t align, std::size_t n) noexcept {
    if (!detail::is_pow2(align) || align > MaxAlign) {
      errno = EINVAL;
      return nullptr;
    }
    if (align <= Alignment) return malloc(n);
    // At least one byte: the aligned address of an empty request could otherwise be the
    // block's end, which is the next block's start (and free would take that one).
    if (n == 0) n = 1;
    std::size_t need;
    if (detail::checked_add(n, align - Alignment, need) && need <= threshold_)
      return Super::mallocAlignedIn(align, need);
    return mallocHuge(n, align, nullptr);
  }

  // p resized to n bytes without moving, or nullptr (p untouched) when the block is too
  // small, or so much larger than n that moving saves memory. A huge object that stays
  // huge is cut where it is, its pages past the new end unmapped, as glibc's realloc does
  // a mapped chunk (moving would copy n bytes, making them resident, however few of them
  // the program ever touched).
  void* reallocInPlace(void* p, std::size_t n) noexcept {
    void* chunk = p != nullptr ? Super::chunkOf(p) : nullptr;
    if (chunk == nullptr) return nullptr;
    const std::size_t usable = sizeIn(chunk, p);
    if (usable == 0) return nullptr;
    const bool huge = !Super::ownsChunk(chunk) && static_cast<Header*>(chunk)->kind == kHugeKind;
    if constexpr (OtherChunks<Super>) {
      if (!huge && !Super::ownsChunk(chunk) && Super::resizeOther(chunk, p, n)) return p;
    }
    if (n > usable) return nullptr;
    if (n > threshold_ && huge) {
      shrinkHuge(chunk, n);
      return p;
    }
    if (n < usable / 2 && usable > 64) return nullptr;
    return p;
  }

  // A huge object grown to n bytes by moving its pages instead of copying them (mremap), or
  // nullptr (p untouched) when p is not a huge object or cannot grow that way.
  void* reallocMoving(void* p, std::size_t n) noexcept {
    void* chunk = p != nullptr ? Super::chunkOf(p) : nullptr;
    if (chunk == nullptr || Super::ownsChunk(chunk) || n <= threshold_) return nullptr;
    auto* h = static_cast<Header*>(chunk);
    if (h->kind != kHugeKind || addr(p) != addr(chunk) + h->objectOffset) return nullptr;
    const std::size_t offset = h->objectOffset;
    std::size_t total;
    if (offset >= Super::SegmentSize || !detail::checked_add(n, offset, total)) return nullptr;
    const std::size_t before = Super::chunkSize(chunk);
    void* moved = Super::growChunk(chunk, total);
    if (moved == nullptr) return nullptr;
    const std::size_t grown = Super::chunkSize(moved) - before;
    Super::commit(grown);
    Super::addInUse(grown);
    static_cast<Header*>(moved)->committed += grown;
    return static_cast<std::byte*>(moved) + offset;
  }

  // Empties what the calling thread may (Super::trimHeaps), the huge cache and the source's
  // cached segments. 1 if anything went back.
  int trim(std::size_t = 0) noexcept {
    const std::size_t before = Super::committed();
    Super::trimHeaps();
    const std::size_t unmapped = Super::trimChunks() + dropCache();
    return unmapped > 0 || Super::committed() < before ? 1 : 0;
  }

  void prepareFork() noexcept {
    cache_.lock();
    Super::prepareFork();
  }
  void parentAfterFork() noexcept {
    Super::parentAfterFork();
    cache_.unlock();
  }
  void childAfterFork() noexcept {
    Super::childAfterFork();
    cache_.unlock();
  }

 private:
  static constexpr std::uintptr_t kHugeKind = 0x4a6e4a6e;
  static constexpr std::size_t kHeaderBytes = 64;

  struct Header {
    std::size_t chunkHeader[Super::ChunkHeaderBytes / sizeof(std::size_t)];
    std::uintptr_t kind;
    std::size_t objectOffset;
    std::size_t committed;  // bytes of the chunk that may be resident
  };
  static_assert(sizeof(Header) <= kHeaderBytes);

  static std::uintptr_t addr(const void* p) noexcept { return reinterpret_cast<std::uintptr_t>(p); }

  // Usable bytes from p to the end of its object in `chunk` (chunkOf(p)); 0 for pointers
  // free ignores.
  std::size_t sizeIn(void* chunk, void* p) const noexcept {
    if (Super::ownsChunk(chunk)) return Super::getSizeIn(chunk, p);
    auto* h = static_cast<Header*>(chunk);
    if (h->kind != kHugeKind) {
      if constexpr (OtherChunks<Super>) return Super::getSizeOther(chunk, p);
      return 0;
    }
    if (addr(p) != addr(chunk) + h->objectOffset) return 0;
    return Super::chunkSize(chunk) - h->objectOffset;
  }

  // calloc of a huge object: a cached chunk is cleared, a new one reads as zero.
  [[gnu::noinline]] void* mallocHugeZeroed(std::size_t n) noexcept {
    bool fresh = false;
    void* p = mallocHuge(n, Alignment, &fresh);
    if (p != nullptr && !fresh) clearReused(p, n);
    return p;
  }

  // A cached chunk made to fit (grown, or its unneeded tail decommitted), else a new one;
  // *fresh (if asked) says it reads as zero.
  [[gnu::noinline]] void* mallocHuge(std::size_t n, std::size_t align, bool* fresh) noexcept {
    const std::size_t seg = Super::SegmentSize;
    const std::size_t offset = align < seg ? detail::align_up(kHeaderBytes, align) : seg;
    std::size_t total;
    if (!detail::checked_add(n, offset, total) || total > (std::size_t{1} << 46)) {
      errno = ENOMEM;
      return nullptr;
    }
    expireCache();
    HugeChunkCache::Entry e = align < seg ? cache_.take(total) : HugeChunkCache::Entry{};
    if (e.chunk != nullptr && !fitCached(e, total)) e.chunk = nullptr;
    if (fresh != nullptr) *fresh = e.chunk == nullptr;
    if (e.chunk == nullptr) {
      e.chunk = align < seg ? Super::allocChunk(total, seg, 0) : Super::allocChunk(total, align, seg);
      if (e.chunk == nullptr) return nullptr;
      e.length = e.committed = Super::chunkSize(e.chunk);
      Super::commit(e.committed);
    }
    auto* h = static_cast<Header*>(e.chunk);
    h->kind = kHugeKind;
    h->objectOffset = offset;
    h->committed = e.committed;
    Super::addInUse(e.length - offset);
    return static_cast<std::byte*>(e.chunk) + offset;
  }

  // Zeroes n bytes at p in a reused chunk. Its whole pages are handed back rather than
  // written (they read as zero when next touched), so a big calloc that touches little of
  // its memory makes little of it resident, as a fresh mapping would; only the partial
  // pages at either end are written. The pages stay in the books as the object's.
  void clearReused(void* p, std::size_t n) noexcept {
    const std::uintptr_t begin = addr(p), end = begin + n;
    const std::uintptr_t lo = platform::pageAlignUp(begin), hi = platform::pageAlignDown(end);
    if (hi <= lo) {
      std::memset(p, 0, n);
      return;
    }
    std::memset(p, 0, lo - begin);
    Super::zeroPages(reinterpret_cast<void*>(lo), hi - lo);
    std::memset(reinterpret_cast<void*>(hi), 0, end - hi);
  }

  // Cuts a live huge object's chunk to its object's n bytes (whole pages), when that gives
  // pages back; the books follow.
  void shrinkHuge(void* chunk, std::size_t n) noexcept {
    auto* h = static_cast<Header*>(chunk);
    const std::size_t len = Super::chunkSize(chunk);
    if (!Super::shrinkChunk(chunk, h->objectOffset + n)) return;
    const std::size_t kept = Super::chunkSize(chunk);
    Super::subInUse(len - kept);
    if (h->committed > kept) {
      Super::uncommit(h->committed - kept);
      h->committed = kept;
    }
  }

  // Makes a cached chunk fit total bytes: grows a short one by moving its pages; decommits
  // the tail of one much longer than needed. False (the chunk given back) when growing fails.
  bool fitCached(HugeChunkCache::Entry& e, std::size_t total) noexcept {
    const std::size_t need = platform::pageAlignUp(total);
    if (e.length < total) {
      void* moved = Super::growChunk(e.chunk, total);
      if (moved == nullptr) {
        release(e);
        return false;
      }
      const std::size_t length = Super::chunkSize(moved);
      Super::commit(length - e.committed);
      e = {moved, length, length, 0};
      return true;
    }
    if (e.committed > 2 * need) {
      Super::decommit(static_cast<std::byte*>(e.chunk) + need, e.committed - need, platform::Decommit::Now);
      e.committed = need;
    } else if (e.committed < need) {
      Super::commit(need - e.committed);
      e.committed = need;
    }
    return true;
  }

  [[gnu::noinline]] void freeHuge(void* chunk, void* p) noexcept {
    auto* h = static_cast<Header*>(chunk);
    if (h->kind != kHugeKind) {
      if constexpr (OtherChunks<Super>) Super::freeOther(chunk, p);
      return;
    }
    if (addr(p) != addr(chunk) + h->objectOffset) return;
    const std::size_t len = Super::chunkSize(chunk);
    Super::subInUse(len - h->objectOffset);
    h->kind = 0;  // from here on free(p) and getSize(p) ignore it
    const HugeChunkCache::Entry e{chunk, len, h->committed, Super::nowMs()};
    if (!cache_.put(e, Super::tunables())) release(e);
    expireCache();
  }

  // Gives back the chunks cached longer than the purge delay. Cost when nothing is due: a
  // relaxed load and, with chunks cached, a clock read.
  void expireCache() noexcept {
    const std::uint64_t delay = Super::tunables().purgeDelayMs;
    const std::uint64_t oldest = cache_.oldestSince();
    if (oldest == ~std::uint64_t{0}) return;
    const std::uint64_t now = Super::nowMs();
    if (now < oldest + delay) return;
    dropOlder(now - delay);
  }

  // Gives back the chunks cached at or before cutoff; the bytes that went back.
  std::size_t dropOlder(std::uint64_t cutoff) noexcept {
    HugeChunkCache::Entry drop[HugeChunkCache::MaxChunks];
    const std::size_t n = cache_.takeOlder(cutoff, drop);
    std::size_t bytes = 0;
    for (std::size_t i = 0; i < n; ++i) {
      bytes += drop[i].length;
      release(drop[i]);
    }
    return bytes;
  }
  std::size_t dropCache() noexcept { return dropOlder(~std::uint64_t{0}); }

  void release(const HugeChunkCache::Entry& e) noexcept {
    Super::uncommit(e.committed);
    Super::freeChunk(e.chunk);
  }

  std::size_t threshold_ = 0;
  HugeChunkCache cache_;
};

}  // namespace strata
