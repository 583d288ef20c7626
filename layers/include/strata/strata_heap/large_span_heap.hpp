// LargeSpanHeap: objects above MinSpan bytes (and up to MaxSize) as runs of 4 KiB pages in
// shared arenas, placed best-fit and joined with their free neighbours when freed
// (SpanArena, SpanBins); everything smaller goes to Super, the per-thread size-class pages.
//
// Why: with size classes, a large object is rounded to its class and its page to whole
// slots, and each class keeps pages of its own, so a program holding a few hundred large
// objects of scattered sizes pays for the rounding and for partly used pages of every class
// in use. Here an object costs its size rounded up to 4 KiB, a freed run is reused by any
// size that fits, and neighbours join, so memory freed by large objects serves the next
// ones whatever their sizes; realloc grows an object into the free pages after it without
// copying. Large objects are few and each costs far more to fill than to place, so one lock
// for all of them is cheap.
//
// When memory goes back: free runs stay committed up to an allowance (the tunables'
// dirtySlots worth of bytes plus 1/8 of the pages in use); beyond it, once purgeDelayMs
// has passed since the allowance was first exceeded, the longest free runs are decommitted
// (MADV_DONTNEED, so the resident size drops and the pages read as zero) until the
// allowance holds again. An arena left wholly free goes back to the source at once when
// another arena is wholly free too. trimHeaps gives every free run back.
//
// Routing: malloc and mallocZeroed by size (a compare the layer above already made folds
// away); free, getSize and realloc by the chunk's kind word, through the *Other calls
// HugeObjectHeap makes for chunks that are neither segments nor huge objects.
#pragma once
#include <cerrno>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "strata/detail/align.hpp"
#include "strata/detail/spin_lock.hpp"
#include "strata/platform/memory.hpp"
#include "strata/strata_heap/accounted_segments.hpp"
#include "strata/strata_heap/span_arena.hpp"

namespace strata {

// What LargeSpanHeap needs of its parent: a heap for the small requests, the source's
// chunk calls for arenas, and the books, tunables and clock.
template <class S>
concept SpanChunkSource = requires(S& s, const S& cs, void* p, std::size_t n) {
  { s.malloc(n) } -> std::same_as<void*>;
  { s.mallocZeroed(n) } -> std::same_as<void*>;
  { s.mallocAlignedIn(n, n) } -> std::same_as<void*>;
  { s.allocChunk(n, n, n) } -> std::same_as<void*>;
  { s.freeChunk(p) } -> std::same_as<void>;
  { S::zeroPages(p, n) } -> std::same_as<void>;
  { s.decommit(p, n, platform::Decommit::Now) } -> std::same_as<void>;
  s.commit(n);
  s.uncommit(n);
  s.addInUse(n);
  s.subInUse(n);
  s.trimHeaps();
  { cs.tunables() } -> std::same_as<const StrataTunables&>;
  { S::nowMs() } -> std::same_as<std::uint64_t>;
  { S::MaxSmall } -> std::convertible_to<std::size_t>;
  { S::ChunkHeaderBytes } -> std::convertible_to<std::size_t>;
};

template <SpanChunkSource Super, std::size_t MinSpan = std::size_t{64} << 10, unsigned ArenaShift = 27>
class LargeSpanHeap : public Super {
  static constexpr std::size_t ArenaBytes = std::size_t{1} << ArenaShift;
  using Arena = SpanArena<ArenaBytes, Super::ChunkHeaderBytes>;
  using Node = typename Arena::Node;

 public:
  // Requests up to MaxSmall go to Super's size classes (MinSpan, or less when Super's
  // classes end sooner); up to MaxSize to spans: a quarter of an arena and a page more, so
  // a request of exactly a quarter (a power of two) stays a span when a layer above adds a
  // few bytes of its own (a hardening layer's header and canary).
  static constexpr std::size_t MaxSmall = MinSpan < Super::MaxSmall ? MinSpan : Super::MaxSmall;
  static_assert(MaxSmall % 16 == 0);
  static constexpr std::size_t MaxSize = ArenaBytes / 4 + kSpanPageBytes;

  using Super::Super;
  LargeSpanHeap(const LargeSpanHeap&) = delete;
  LargeSpanHeap& operator=(const LargeSpanHeap&) = delete;

  void* malloc(std::size_t n) noexcept {
    if (n <= MaxSmall) [[likely]] return Super::malloc(n);
    return mallocSpan(n, false);
  }
  void* mallocZeroed(std::size_t n) noexcept {
    if (n <= MaxSmall) return Super::mallocZeroed(n);
    return mallocSpan(n, true);
  }
  // mallocZeroed saying whether the object may lie on pages never written (a span: always
  // said, as its pages may have been decommitted).
  void* mallocZeroedLazy(std::size_t n, bool& lazy) noexcept
    requires requires(Super& s, bool& l) { s.mallocZeroedLazy(n, l); }
  {
    if (n <= MaxSmall) return Super::mallocZeroedLazy(n, lazy);
    lazy = true;
    return mallocSpan(n, true);
  }
  // need (>= n + align - 16) bytes with the object's start aligned to align. A span starts
  // on a page, so alignments up to a page cost nothing; beyond, the span is cut to fit.
  void* mallocAlignedIn(std::size_t align, std::size_t need) noexcept {
    if (need <= MaxSmall) return Super::mallocAlignedIn(align, need);
    const std::size_t n = need - (align - 16);
    if (align <= kSpanPageBytes) return mallocSpan(n, false);
    return mallocSpanAligned(n, align);
  }

  // A chunk that is an arena of ours: its object at p freed (true), or p ignored when it is
  // not the start of an object in use (false, also for chunks that are not arenas).
  bool freeOther(void* chunk, void* p) noexcept {
    if (!isArena(chunk)) return false;
    lock_.lock();
    Node* run = Arena::usedRunAt(static_cast<Header*>(chunk), p);
    if (run != nullptr) release(run);
    lock_.unlock();
    return run != nullptr;
  }
  // Usable bytes of the object at p in an arena; 0 when p is not one.
  std::size_t getSizeOther(void* chunk, const void* p) const noexcept {
    if (!isArena(chunk)) return 0;
    Node* run = Arena::usedRunAt(static_cast<Header*>(chunk), p);
    return run != nullptr ? std::size_t{run->len} << kSpanPageShift : 0;
  }
  // The object at p resized to n bytes where it is: grown into the free pages after it, or
  // its pages past n given back. False (p untouched) when that cannot be done, or when n is
  // small enough for the size classes.
  bool resizeOther(void* chunk, void* p, std::size_t n) noexcept {
    if (!isArena(chunk) || n <= MaxSmall || n > MaxSize) return false;
    const std::size_t want = pagesFor(n);
    lock_.lock();
    Node* run = Arena::usedRunAt(static_cast<Header*>(chunk), p);
    const bool done = run != nullptr && (want <= run->len ? shrink(run, want) : grow(run, want));
    lock_.unlock();
    return done;
  }

  // Everything free goes back, the spare arena too when it is wholly free, then Super's own
  // trim.
  void trimHeaps() noexcept {
    lock_.lock();
    purgeDownTo(0);
    if (spare_ != nullptr && spare_->freePages == Arena::UsablePages) {
      dropArena(spare_);
      spare_ = nullptr;
    }
    lock_.unlock();
    Super::trimHeaps();
  }

  void prepareFork() noexcept {
    lock_.lock();
    Super::prepareFork();
  }
  void parentAfterFork() noexcept {
    Super::parentAfterFork();
    lock_.unlock();
  }
  void childAfterFork() noexcept {
    Super::childAfterFork();
    lock_.unlock();
  }

 private:
  using Header = typename Arena::Header;
  static constexpr std::uintptr_t kArenaKind = 0x5a4e5a4e;
  static constexpr std::uint64_t kNever = ~std::uint64_t{0};

  static bool isArena(void* chunk) noexcept { return static_cast<Header*>(chunk)->kind == kArenaKind; }
  static std::size_t pagesFor(std::size_t n) noexcept { return (n + kSpanPageBytes - 1) >> kSpanPageShift; }
  static std::size_t bytesOf(std::size_t pages) noexcept { return pages << kSpanPageShift; }

  [[gnu::noinline]] void* mallocSpan(std::size_t n, bool zeroed) noexcept {
    if (n > MaxSize) {  // the layer above routes these elsewhere; used alone, no arena holds them
      errno = ENOMEM;
      return nullptr;
    }
    const std::size_t pages = pagesFor(n);
    lock_.lock();
    Node* run = take(pages);
    const bool clean = run != nullptr && run->state == Arena::kClean;
    if (run != nullptr) use(run, pages);
    lock_.unlock();
    if (run == nullptr) {
      errno = ENOMEM;
      return nullptr;
    }
    void* p = Arena::pageAddress(run);
    if (zeroed && !clean) std::memset(p, 0, n);
    return p;
  }

  // A span of n bytes at an address aligned to align (> a page): enough pages to find one,
  // then the pages before and after the object go back.
  [[gnu::noinline]] void* mallocSpanAligned(std::size_t n, std::size_t align) noexcept {
    const std::size_t pages = pagesFor(n), extra = (align >> kSpanPageShift) - 1;
    if (pages + extra > Arena::UsablePages) {
      errno = ENOMEM;
      return nullptr;
    }
    lock_.lock();
    Node* run = take(pages + extra);
    if (run != nullptr) {
      use(run, run->len);
      const std::uintptr_t at = detail::align_up(Arena::addr(Arena::pageAddress(run)), align);
      const std::size_t skip = (at - Arena::addr(Arena::pageAddress(run))) >> kSpanPageShift;
      if (skip > 0) {
        Node* object = run + skip;
        Arena::setRun(object, run->len - skip, Arena::kUsed);
        Arena::setRun(run, skip, Arena::kUsed);
        release(run);
        run = object;
      }
      shrink(run, pages);
    }
    lock_.unlock();
    if (run == nullptr) {
      errno = ENOMEM;
      return nullptr;
    }
    return Arena::pageAddress(run);
  }

  // A free run of at least `pages` (a new arena when none fits); nullptr when out of memory.
  Node* take(std::size_t pages) noexcept {
    Node* run = bins_.take(pages);
    if (run != nullptr) return run;
    void* chunk = Super::allocChunk(ArenaBytes, ArenaBytes, 0);
    if (chunk == nullptr) return nullptr;
    Super::zeroPages(static_cast<Header*>(chunk)->nodes, Arena::NodeBytes);
    Super::commit(bytesOf(Arena::HeaderPages));
    return Arena::init(chunk, kArenaKind);
  }

  // The first `pages` of the free run `run` (off its list) become the object; the rest is
  // filed again.
  void use(Node* run, std::size_t pages) noexcept {
    const typename Arena::State was = run->state;
    const std::size_t len = run->len;
    Arena::arenaOf(run)->freePages -= pages;
    if (was == Arena::kDirty) dirtyFree_ -= pages;
    if (len > pages) {
      Node* rest = run + pages;
      Arena::setRun(rest, len - pages, was);
      file(rest);
    }
    Arena::setRun(run, pages, Arena::kUsed);
    if (was == Arena::kClean) Super::commit(bytesOf(pages));
    used_ += pages;
    Super::addInUse(bytesOf(pages));
  }

  // A used run becomes free, joined with free neighbours that may be resident too, and
  // filed; memory beyond the allowance goes back when due, and a wholly free arena when
  // another one is free already.
  void release(Node* run) noexcept {
    const std::size_t pages = run->len;
    used_ -= pages;
    Super::subInUse(bytesOf(pages));
    Header* arena = Arena::arenaOf(run);
    arena->freePages += pages;
    run->state = Arena::kDirty;
    dirtyFree_ += pages;
    file(join(run));
    if (arena->freePages == Arena::UsablePages && dropSpare(arena)) return;
    purgeIfDue();
  }

  // `run` (free, off the lists) joined with its neighbours in the same state (resident runs
  // with resident ones, clean with clean, so the books and calloc know what each run is);
  // the joined run, off the lists.
  Node* join(Node* run) noexcept {
    if (Node* next = Arena::nextRun(run); next != nullptr && next->state == run->state) {
      bins_.remove(next);
      const std::size_t len = run->len + next->len;
      next->state = Arena::kInterior;
      Arena::setRun(run, len, run->state);
    }
    if (Node* prev = Arena::prevRun(run); prev != nullptr && prev->state == run->state) {
      bins_.remove(prev);
      const std::size_t len = prev->len + run->len;
      run->state = Arena::kInterior;
      Arena::setRun(prev, len, prev->state);
      run = prev;
    }
    return run;
  }

  void file(Node* run) noexcept { bins_.insert(run); }

  // A wholly free arena goes back to the source when the spare one is wholly free too (true:
  // it went); otherwise it becomes the spare.
  bool dropSpare(Header* arena) noexcept {
    if (spare_ == nullptr || spare_ == arena || spare_->freePages != Arena::UsablePages) {
      spare_ = arena;
      return false;
    }
    dropArena(arena);
    return true;
  }

  // A wholly free arena off the lists and back to the source.
  void dropArena(Header* arena) noexcept {
    for (Node* r = &arena->nodes[Arena::HeaderPages]; r != nullptr; r = Arena::nextRun(r)) {
      bins_.remove(r);
      if (r->state == Arena::kDirty) {
        dirtyFree_ -= r->len;
        Super::uncommit(bytesOf(r->len));
      }
    }
    Super::uncommit(bytesOf(Arena::HeaderPages));
    Super::freeChunk(arena);
  }

  bool grow(Node* run, std::size_t want) noexcept {
    Node* next = Arena::nextRun(run);
    if (next == nullptr || !Arena::isFree(next) || run->len + next->len < want) return false;
    bins_.remove(next);
    const std::size_t more = want - run->len;
    const std::size_t base = run->len;
    use(next, more);
    next->state = Arena::kInterior;
    Arena::setRun(run, base + more, Arena::kUsed);
    return true;
  }

  bool shrink(Node* run, std::size_t want) noexcept {
    if (want == run->len) return true;
    Node* tail = run + want;
    Arena::setRun(tail, run->len - want, Arena::kUsed);
    Arena::setRun(run, want, Arena::kUsed);
    release(tail);
    return true;
  }

  // Past the allowance for purgeDelayMs: the longest free runs go back until it holds.
  void purgeIfDue() noexcept {
    const std::size_t allowance = (Super::tunables().dirtySlots << 16 >> kSpanPageShift) + used_ / 8;
    if (dirtyFree_ <= allowance) {
      overSince_ = kNever;
      return;
    }
    const std::uint64_t now = Super::nowMs();
    if (overSince_ == kNever) overSince_ = now;
    if (now - overSince_ >= Super::tunables().purgeDelayMs ||
        bytesOf(dirtyFree_) > Super::tunables().maxDelayedBytes) {
      purgeDownTo(allowance);
      overSince_ = kNever;
    }
  }

  // Decommits the longest resident free runs until at most `keep` pages of them are left;
  // each joins its clean neighbours.
  void purgeDownTo(std::size_t keep) noexcept {
    while (dirtyFree_ > keep) {
      Node* longest = nullptr;
      bins_.forEachLongestFirst([&](Node* run) {
        if (run->state == Arena::kDirty) longest = run;
        return longest == nullptr;
      });
      if (longest == nullptr) return;
      bins_.remove(longest);
      Super::decommit(Arena::pageAddress(longest), bytesOf(longest->len), platform::Decommit::Now);
      dirtyFree_ -= longest->len;
      longest->state = Arena::kClean;
      file(join(longest));
    }
  }

  SpinLock lock_;
  SpanBins<Arena> bins_;
  Header* spare_ = nullptr;           // a wholly free arena kept for reuse
  std::size_t used_ = 0;              // pages in objects
  std::size_t dirtyFree_ = 0;         // free pages that may be resident
  std::uint64_t overSince_ = kNever;  // when the free pages first exceeded the allowance
};

}  // namespace strata
