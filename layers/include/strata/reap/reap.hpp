// Reap: a region that can also free single objects (Berger, Zorn and McKinley, "Reconsidering
// custom memory allocation"), composed from the core's layers:
//
//   Reap<Top> = NestedHeap<ReapHeap<Top>>
//   ReapHeap  = cleanups, make<T>, realloc, ownership checks over
//               ClearOptimizedHeap<ReapRegion<Top>, ReapStore>
//   ReapRegion<Top> = CoalesceableHeap<ReapChunkHeap<RegionHeap<ReapChunkSource<Top>>>>
//       region mode: a bump pointer through geometric chunks (8 KiB, doubling), every object
//       laid out with CoalesceableHeap's boundary tags (8 bytes each), because the chunk
//       heap is contiguous, so each new object takes the place of the previous fence;
//   ReapStore = ThresholdHeap<CoalesceHeap<SegHeap<kLeaBins, LeaBinClasses, ReapBin, ...>>,
//                             kReapQuickMax, ReapQuickList>
//       the Lea-style store that freed objects go to: objects up to 256 bytes wait on
//       exact-size quick lists and are reused as they are; larger ones are coalesced with
//       free neighbours and binned by size (and a larger request that finds nothing flushes
//       the quick lists into the bins first); later requests draw from it first. It owns no memory of its own,
//       and is built (in storage inside the reap) only on the reap's first free: a reap
//       that never frees a single object, as most children do, never pays for its 128 bins.
//
//   ReapChunkSource<Top> = the chunk cache of the reap's tree (strata/reap/chunk_cache.hpp):
//       a child's chunks come from, and go back to, its root's cache; the root's Top is asked
//       only on a miss, and the cache (bounded) goes back to Top when the root is destroyed.
//
// Children (NestedHeap): a child lives in its parent's chunk memory; a destroyed child's
// storage stays with the parent for its next child, so making and dropping a child per scope
// or per request costs no parent malloc or free, and its first chunk comes from the tree's
// cache: a few dozen stores and a list pop/push, not a 2.8 KB construction.
//
// clear() runs the cleanups (newest first), destroys the children, and frees every object,
// keeping the reap; its chunks go to the tree's cache, from which it refills. Destruction
// does the same; a root's destruction then gives every cached chunk back to Top.
// Built with AddressSanitizer, unused chunk space, freed objects (past their two link words)
// and cleared chunks are poisoned.
#pragma once
#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#include "strata/building/adapt_heap.hpp"
#include "strata/building/coalesce_heap.hpp"
#include "strata/building/freelist_heap.hpp"
#include "strata/combining/threshold_heap.hpp"
#include "strata/combining/seg_heap.hpp"
#include "strata/concepts.hpp"
#include "strata/detail/align.hpp"
#include "strata/detail/header.hpp"
#include "strata/detail/poison.hpp"
#include "strata/general/lea_heap.hpp"
#include "strata/platform/page.hpp"
#include "strata/reap/chunk_cache.hpp"
#include "strata/reap/clear_optimized_heap.hpp"
#include "strata/reap/nested_heap.hpp"
#include "strata/reap/region_heap.hpp"
#include "strata/representation/coalesceable_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/null_heap.hpp"

namespace strata {

inline constexpr std::size_t kReapFirstChunk = std::size_t{8} << 10;
inline constexpr std::size_t kReapDoublingLimit = std::size_t{256} << 10;

// Bumps through chunks taken from a RegionHeap: contiguous (top() is the bump pointer) so that
// CoalesceableHeap lays consecutive objects out as one run. Chunk sizes are geometric: 8 KiB,
// doubling while the reap holds under 256 KiB, then a quarter of what it holds (so growth
// never overshoots by more than a fifth). The sizes depend only on the sizes before them
// (and on objects too big for a chunk), and a clear starts over from the first chunk, so a
// reap cleared or made again asks for the same sizes and its tree's chunk cache
// (strata/reap/chunk_cache.hpp) finds them. Freeing the most recent allocation gives it back
// (CoalesceableHeap does so when a new chunk did not continue the run). Fast path: a compare
// and an add (plus unpoisoning under ASan).
template <Heap Super>
class ReapChunkHeap : public Super {
 public:
  static constexpr std::size_t Alignment = 16;

  using Super::Super;
  ReapChunkHeap() = default;
  ReapChunkHeap(const ReapChunkHeap&) = delete;
  ReapChunkHeap& operator=(const ReapChunkHeap&) = delete;

  void* malloc(std::size_t n) noexcept {
    if (!detail::checked_align_up(n, 16, n)) return outOfMemory();
    if (n > static_cast<std::size_t>(end_ - bump_) && !refill(n)) return nullptr;
    std::byte* p = bump_;
    detail::unpoison(p, n);
    last_ = p;
    bump_ = p + n;
    return p;
  }

  // n bytes (a multiple of 16) starting exactly at `at`, when the next allocation would start
  // there and the chunk has room; else nullptr, with nothing changed. CoalesceableHeap's
  // fast path: one call decides that a new object continues the run.
  void* extendAt(void* at, std::size_t n) noexcept {
    if (at != bump_ || n > static_cast<std::size_t>(end_ - bump_)) return nullptr;
    std::byte* p = bump_;
    detail::unpoison(p, n);
    last_ = p;
    bump_ = p + n;
    return p;
  }

  // Takes back the most recent allocation; anything else stays until clear.
  void free(void* p) noexcept {
    if (p == nullptr || p != last_) return;
    detail::poison(p, static_cast<std::size_t>(bump_ - last_));
    bump_ = last_;
    last_ = nullptr;
  }

  // Where the next allocation starts if it fits the current chunk.
  void* top() const noexcept { return bump_; }

  // Gives every chunk back; the next chunk is a first chunk again.
  void clear() noexcept {
    Super::clear();
    bump_ = end_ = last_ = nullptr;
    held_ = 0;
    next_ = kReapFirstChunk;
  }

  // Bytes in chunks (what this heap took from the region, headers excluded).
  std::size_t chunkBytes() const noexcept { return held_; }

 private:
  bool refill(std::size_t n) noexcept {
    std::size_t size = next_;
    std::size_t want;
    if (!detail::checked_add(n, 256, want) || !platform::checkedPageAlignUp(want, want)) {
      outOfMemory();
      return false;
    }
    if (want > size) size = want;
    auto* c = static_cast<std::byte*>(Super::malloc(size - 16));  // 16: the region's header
    if (c == nullptr) return false;
    size -= 16;
    detail::poison(c, size);
    bump_ = c;
    end_ = c + size;
    last_ = nullptr;
    held_ += size;
    next_ = held_ < kReapDoublingLimit ? 2 * next_
                                       : std::max(next_, platform::pageAlignUp(held_ / 4));
    return true;
  }

  [[gnu::cold]] static void* outOfMemory() noexcept {
    errno = ENOMEM;
    return nullptr;
  }

  std::byte* bump_ = nullptr;
  std::byte* end_ = nullptr;
  std::byte* last_ = nullptr;
  std::size_t held_ = 0;
  std::size_t next_ = kReapFirstChunk;
};

// The parent of the store's boundary-tag helpers: has nothing to give, clears to nothing.
class ReapNullStore : public NullHeap<16> {
 public:
  void clear() noexcept {}
};

// A SegHeap bin for boundary-tagged free blocks that keeps them poisoned while they sit in
// the bin: all but the two link words at the front and the footer at the back. A block
// leaving the bin (malloc, remove) is unpoisoned whole before anyone writes into it.
template <class S>
class ReapBin : public DLListHeap<S> {
  using Base = DLListHeap<S>;
  using Tags = CoalesceableHeap<NullHeap<16>>;

 public:
  void* malloc(std::size_t n) noexcept {
    void* p = Base::malloc(n);
    if (p != nullptr) detail::unpoison(p, Tags::getSize(p));
    return p;
  }
  void free(void* p) noexcept {
    if (p == nullptr) return;
    Base::free(p);
    const std::size_t usable = Tags::getSize(p);
    if (usable > 24) detail::poison(detail::bytes(p) + 16, usable - 24);
  }
  void remove(void* p) noexcept {
    detail::unpoison(p, Tags::getSize(p));
    Base::remove(p);
  }
};

// A quick list of the reap's store (ThresholdHeap): exact-size freed objects reused as they
// are. A parked object stays "in use" for its neighbours (nothing merges with it), so the
// list marks it with kFlagParked instead: a second free of it is then told apart from a live
// object (ReapHeap::looksLive/isLive). Under ASan all but its link word is poisoned.
class ReapQuickList : public FreelistHeap<NullHeap<16>> {
  using Base = FreelistHeap<NullHeap<16>>;
  using Tags = CoalesceableHeap<NullHeap<16>>;

 public:
  void* malloc(std::size_t n) noexcept {
    void* p = Base::malloc(n);
    if (p != nullptr) {
      detail::header_word(p) &= ~detail::kFlagParked;
      detail::unpoison(p, Tags::getSize(p));
    }
    return p;
  }
  void free(void* p) noexcept {
    if (p == nullptr) return;
    detail::header_word(p) |= detail::kFlagParked;
    Base::free(p);
    detail::poison(detail::bytes(p) + 8, Tags::getSize(p) - 8);
  }
};

// Freed objects of up to this many bytes (usable size 264) wait on exact-size quick lists.
inline constexpr std::size_t kReapQuickMax = 256;

template <Heap Top>
using ReapRegion = CoalesceableHeap<ReapChunkHeap<RegionHeap<ReapChunkSource<Top>>>>;

using ReapStore = ThresholdHeap<
    CoalesceHeap<SegHeap<kLeaBins, LeaBinClasses, ReapBin, CoalesceableHeap<ReapNullStore>>>,
    kReapQuickMax, ReapQuickList>;

// The reap without nesting: ClearOptimizedHeap over the region and the store, plus cleanup
// callbacks, typed construction (make), realloc and an ownership check.
template <Heap Top = MallocHeap>
class ReapHeap : public ClearOptimizedHeap<ReapRegion<Top>, ReapStore> {
  using Base = ClearOptimizedHeap<ReapRegion<Top>, ReapStore>;
  using Tags = CoalesceableHeap<NullHeap<16>>;

 public:
  static constexpr std::size_t Alignment = 16;
  using Cleanup = void (*)(void*);

  ReapHeap() = default;
  ReapHeap(const ReapHeap&) = delete;
  ReapHeap& operator=(const ReapHeap&) = delete;
  ~ReapHeap() { runCleanups(); }

  // Usable size of p (boundary tag: a load and a mask). 0 for nullptr.
  static std::size_t getSize(void* p) noexcept { return Tags::getSize(p); }

  // Grows or shrinks p; in place when it already has room. realloc(nullptr, n) is malloc,
  // realloc(p, 0) frees p and returns nullptr. On failure p is untouched.
  void* realloc(void* p, std::size_t n) noexcept {
    if (p == nullptr) return this->malloc(n);
    if (n == 0) {
      this->free(p);
      return nullptr;
    }
    const std::size_t have = getSize(p);
    if (n <= have) return p;
    void* q = this->malloc(n);
    if (q == nullptr) return nullptr;
    std::memcpy(q, p, have);
    this->free(p);
    return q;
  }

  // Registers fn(arg) to run when the reap is cleared or destroyed (newest first). The
  // record lives in the reap. false when it cannot be allocated.
  bool addCleanup(Cleanup fn, void* arg) noexcept {
    auto* c = static_cast<CleanupNode*>(this->malloc(sizeof(CleanupNode)));
    if (c == nullptr) return false;
    c->fn = fn;
    c->arg = arg;
    c->next = cleanups_;
    cleanups_ = c;
    return true;
  }

  // Constructs a T in the reap; its destructor runs on clear/destroy unless T is trivially
  // destructible. nullptr when out of memory; an exception from T's constructor propagates
  // (after the memory is freed).
  template <class T, class... A>
  T* make(A&&... args) {
    static_assert(alignof(T) <= Alignment, "Reap::make: over-aligned types are not supported");
    void* m = this->malloc(sizeof(T));
    if (m == nullptr) return nullptr;
    T* t;
#if defined(__cpp_exceptions)
    try {
      t = ::new (m) T(std::forward<A>(args)...);
    } catch (...) {
      this->free(m);
      throw;
    }
#else
    t = ::new (m) T(std::forward<A>(args)...);
#endif
    if constexpr (!std::is_trivially_destructible_v<T>) {
      if (!addCleanup([](void* o) { static_cast<T*>(o)->~T(); }, t)) {
        t->~T();
        this->free(m);
        return nullptr;
      }
    }
    return t;
  }

  // Runs the cleanups, then frees every object.
  void clear() noexcept {
    runCleanups();
    Base::clear();
  }

  // Cheap check that p may be a live object of this reap: 16-aligned, inside one of its
  // chunks with its whole block, and marked in use. Cost: a walk over the chunk list.
  bool looksLive(const void* p) const noexcept {
    std::byte* start;
    std::size_t size;
    if (!chunkOf(p, start, size)) return false;
    void* q = const_cast<void*>(p);
    const std::size_t word = detail::header_word(q);
    const std::size_t block = word & ~detail::kFlagMask;
    return (word & (detail::kFlagInUse | detail::kFlagParked)) == detail::kFlagInUse &&
           block >= Tags::MinBlockSize &&
           block <= static_cast<std::size_t>(start + size - detail::bytes(q));
  }

  // Exact check: p is the start of a block of one of this reap's chunks and that block is in
  // use. Walks the chunk's blocks from the first, reading only header words (never poisoned).
  // Cost: proportional to the objects in the chunk; for debug builds and bad-input paths.
  bool isLive(const void* p) const noexcept {
    std::byte* start;
    std::size_t size;
    if (!chunkOf(p, start, size)) return false;
    void* b = start + Tags::RunOverhead;
    for (;;) {
      if (Tags::isFence(b)) return false;
      if (b == p) return !Tags::isFree(b) && !(detail::header_word(b) & detail::kFlagParked);
      if (b > p) return false;
      b = Tags::next(b);
    }
  }

  // Bytes the reap holds in chunks.
  std::size_t bytesInChunks() const noexcept { return this->region().chunkBytes(); }

  // Makes this reap take its chunks from, and give them back to, parent's tree's chunk
  // cache (NestedHeap::createChild calls it on every child).
  void joinParent(ReapHeap& parent) noexcept { this->region().joinParent(parent.region()); }

  // The chunk cache of this reap's tree (see strata/reap/chunk_cache.hpp): bytes cached,
  // chunk bytes in use by the whole tree, trimming, and the bound.
  std::size_t cachedBytes() const noexcept { return this->region().cachedBytes(); }
  std::size_t treeChunksInUse() const noexcept { return this->region().chunksInUse(); }
  void trimCache() noexcept { this->region().trimCache(); }
  void setCacheLimit(std::size_t bytes) noexcept { this->region().setCacheLimit(bytes); }

 private:
  struct alignas(16) CleanupNode {
    Cleanup fn;
    void* arg;
    CleanupNode* next;
  };

  bool chunkOf(const void* p, std::byte*& start, std::size_t& size) const noexcept {
    if (p == nullptr || !detail::is_aligned(p, 16)) return false;
    if (!this->region().find(p, start, size)) return false;
    return static_cast<const std::byte*>(p) >= start + Tags::RunOverhead;
  }

  void runCleanups() noexcept {
    while (CleanupNode* c = cleanups_) {
      cleanups_ = c->next;
      c->fn(c->arg);
    }
  }

  CleanupNode* cleanups_ = nullptr;
};

// The reap: ReapHeap with children (createChild / destroyChild) destroyed with it.
template <Heap Top = MallocHeap>
using Reap = NestedHeap<ReapHeap<Top>>;

}  // namespace strata
