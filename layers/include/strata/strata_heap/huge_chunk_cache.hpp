// HugeChunkCache: freed huge chunks kept, still committed, for HugeObjectHeap to reuse.
//
// Why: a program that allocates and frees blocks of megabytes over and over would otherwise
// pay an mmap, a page fault per page and a munmap for each. A request takes the cached chunk
// that fits most tightly or, when none is long enough, the longest one, which the caller
// grows by moving its pages (mremap): either way the pages it already has cost no faults.
// Bounded: at most tunables().hugeCacheChunks chunks and hugeCacheBytes committed bytes,
// each kept at most purgeDelayMs. Behind a spin lock; every call is on a slow path.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "strata/detail/spin_lock.hpp"
#include "strata/strata_heap/strata_tunables.hpp"

namespace strata {

class HugeChunkCache {
 public:
  static constexpr std::size_t MaxChunks = 64;

  struct Entry {
    void* chunk = nullptr;
    std::size_t length = 0;     // the chunk's length
    std::size_t committed = 0;  // bytes of it that may be resident
    std::uint64_t since = 0;    // ms: when it was cached
  };

  // The entry that fits `total` bytes most tightly, else the longest one (shorter than
  // total); chunk == nullptr when the cache is empty.
  Entry take(std::size_t total) noexcept {
    lock_.lock();
    std::size_t best = count_;
    for (std::size_t i = 0; i < count_; ++i) {
      const std::size_t len = entries_[i].length;
      if (best == count_) {
        best = i;
      } else if (len >= total) {
        if (entries_[best].length < total || len < entries_[best].length) best = i;
      } else if (entries_[best].length < total && len > entries_[best].length) {
        best = i;
      }
    }
    Entry e;
    if (best != count_) {
      e = entries_[best];
      entries_[best] = entries_[--count_];
      bytes_ -= e.committed;
      updateOldest();
    }
    lock_.unlock();
    return e;
  }

  // Keeps e if the limits allow; false when the caller must give it back.
  bool put(const Entry& e, const StrataTunables& t) noexcept {
    const std::size_t maxChunks = t.hugeCacheChunks < MaxChunks ? t.hugeCacheChunks : MaxChunks;
    lock_.lock();
    const bool keep = count_ < maxChunks && bytes_ + e.committed <= t.hugeCacheBytes;
    if (keep) {
      entries_[count_++] = e;
      bytes_ += e.committed;
      updateOldest();
    }
    lock_.unlock();
    return keep;
  }

  // Moves the entries cached at or before `cutoff` (ms; all for ~0) into out (room for
  // MaxChunks); how many.
  std::size_t takeOlder(std::uint64_t cutoff, Entry* out) noexcept {
    lock_.lock();
    std::size_t n = 0, kept = 0;
    for (std::size_t i = 0; i < count_; ++i) {
      if (entries_[i].since <= cutoff) {
        out[n++] = entries_[i];
        bytes_ -= entries_[i].committed;
      } else {
        entries_[kept++] = entries_[i];
      }
    }
    count_ = kept;
    updateOldest();
    lock_.unlock();
    return n;
  }

  // When the oldest cached chunk was cached (ms), ~0 when the cache is empty: one relaxed
  // load, so the heap can tell on every huge malloc and free whether anything is due
  // without taking the lock.
  std::uint64_t oldestSince() const noexcept { return oldest_.load(std::memory_order_relaxed); }

  void lock() noexcept { lock_.lock(); }
  void unlock() noexcept { lock_.unlock(); }

 private:
  // Under the lock, after every change of the entries.
  void updateOldest() noexcept {
    std::uint64_t t = ~std::uint64_t{0};
    for (std::size_t i = 0; i < count_; ++i)
      if (entries_[i].since < t) t = entries_[i].since;
    oldest_.store(t, std::memory_order_relaxed);
  }

  SpinLock lock_;
  std::atomic<std::uint64_t> oldest_{~std::uint64_t{0}};
  std::size_t count_ = 0;
  std::size_t bytes_ = 0;
  Entry entries_[MaxChunks] = {};
};

}  // namespace strata
