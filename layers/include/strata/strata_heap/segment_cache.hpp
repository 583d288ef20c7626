// SegmentCache: empty segments any thread can take, still committed, for the purge delay.
//
// Why: a thread that frees a lot and then stops calling the allocator would otherwise keep
// its empty segments to itself, and the next thread would map and fault in fresh ones (the
// resident size grows with the number of threads that take turns). A heap over its
// allowance hands a wholly empty segment here at once; the next heap that needs a segment
// takes the most recently cached one (its pages are warm) before asking Super. Segments
// cached longer than the purge delay, or beyond the cache's size, go back to Super, which
// decommits them. Cost: a spin lock per segment handed over (4 MiB of memory, so rare).
//
// A warm segment keeps its header: the taker is told (warm = true) and keeps its record of
// which slots are committed; a segment from Super reads as zero beyond its first page.
#pragma once
#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>

#include "strata/detail/spin_lock.hpp"
#include "strata/strata_heap/strata_tunables.hpp"

namespace strata {

// What SegmentCache needs of its parent: segments, their release, the books, the clock.
template <class S>
concept SegmentSupply = requires(S& s, const S& cs, void* p, std::size_t n) {
  { s.allocSegment() } -> std::same_as<void*>;
  { s.freeChunk(p) } -> std::same_as<void>;
  { s.uncommit(n) } -> std::same_as<void>;
  { cs.tunables() } -> std::same_as<const StrataTunables&>;
  { S::nowMs() } -> std::same_as<std::uint64_t>;
  s.lockAll();
  s.unlockAll();
};

template <SegmentSupply Super>
class SegmentCache : public Super {
 public:
  static constexpr std::size_t MaxCached = 256;

  using Super::Super;

  // A segment: the newest cached one (warm = true, its header as its last owner left it), or
  // a fresh one from Super (warm = false), or nullptr.
  void* allocSegment(bool& warm) noexcept {
    lock_.lock();
    void* seg = nullptr;
    if (count_ > 0) {
      seg = entries_[--count_].segment;
      bytes_ -= entries_[count_].committed;
    }
    updateDue();
    lock_.unlock();
    warm = seg != nullptr;
    return seg != nullptr ? seg : Super::allocSegment();
  }

  // An empty segment of which `committed` bytes are still committed: cached. A full cache,
  // or one that would hold more than tunables().maxDelayedBytes, is emptied at once first
  // (a hard cap, as DelayedPurge's: a program that frees that much does not hold it for the
  // delay); with a limit of 0 the segment goes back at once.
  void cacheSegment(void* segment, std::size_t committed) noexcept {
    const std::uint64_t now = Super::nowMs();
    Entry drop[MaxCached];
    std::size_t n = 0;
    lock_.lock();
    if (count_ >= limit() || bytes_ + committed > Super::tunables().maxDelayedBytes) {
      for (; n < count_; ++n) drop[n] = entries_[n];
      count_ = 0;
      bytes_ = 0;
    }
    const bool room = count_ < limit();
    if (room) {
      entries_[count_++] = {segment, committed, now};
      bytes_ += committed;
    }
    updateDue();
    lock_.unlock();
    for (std::size_t i = 0; i < n; ++i) release(drop[i]);
    if (!room) release({segment, committed, now});
    purgeCache(now);
  }

  // Gives back the segments cached for longer than the purge delay (all of them for
  // everything = true). Cost when nothing is due: the lock and a compare.
  void purgeCache(std::uint64_t now, bool everything = false) noexcept {
    Entry drop[MaxCached];
    std::size_t n = 0;
    lock_.lock();
    if (!everything && (count_ == 0 || now < entries_[0].since + Super::tunables().purgeDelayMs)) {
      lock_.unlock();
      return;
    }
    std::size_t kept = 0;
    for (std::size_t i = 0; i < count_; ++i) {
      if (everything || entries_[i].since + Super::tunables().purgeDelayMs <= now) {
        bytes_ -= entries_[i].committed;
        drop[n++] = entries_[i];
      } else {
        entries_[kept++] = entries_[i];
      }
    }
    count_ = kept;
    updateDue();
    lock_.unlock();
    for (std::size_t i = 0; i < n; ++i) release(drop[i]);
  }

  // When the oldest cached segment is due (ms), ~0 when the cache is empty: one relaxed
  // load, so slow paths can check it on every call.
  std::uint64_t cacheDue() const noexcept { return due_.load(std::memory_order_relaxed); }

  std::size_t cachedSegments() noexcept {
    lock_.lock();
    const std::size_t n = count_;
    lock_.unlock();
    return n;
  }

  void lockAll() noexcept {
    lock_.lock();
    Super::lockAll();
  }
  void unlockAll() noexcept {
    Super::unlockAll();
    lock_.unlock();
  }

 private:
  struct Entry {
    void* segment;
    std::size_t committed;
    std::uint64_t since;
  };

  std::size_t limit() const noexcept {
    const std::size_t t = Super::tunables().segmentCache;
    return t < MaxCached ? t : MaxCached;
  }

  void updateDue() noexcept {
    due_.store(count_ > 0 ? entries_[0].since + Super::tunables().purgeDelayMs : ~std::uint64_t{0},
               std::memory_order_relaxed);
  }

  void release(const Entry& e) noexcept {
    Super::uncommit(e.committed);
    Super::freeChunk(e.segment);
  }

  SpinLock lock_;
  std::atomic<std::uint64_t> due_{~std::uint64_t{0}};
  std::size_t count_ = 0;
  std::size_t bytes_ = 0;  // committed bytes of the cached segments
  Entry entries_[MaxCached] = {};
};

}  // namespace strata
