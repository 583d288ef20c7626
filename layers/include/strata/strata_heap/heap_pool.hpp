// HeapPool: every per-thread heap one ThreadBoundHeap made, and the orphans among them (heaps
// whose thread exited, waiting for the next new thread to adopt them, so their memory and
// pages are reused instead of stranded). Heaps are never unlinked: a heap lives as long as
// its ThreadBoundHeap. One spin lock for the lists; each heap's own lock for fork.
#pragma once
#include <concepts>

#include "strata/detail/spin_lock.hpp"

namespace strata {

// What HeapPool keeps in each heap: its lock and the links of the two lists.
template <class H>
concept PooledHeap = requires(H& h) {
  h.lock.lock();
  h.lock.unlock();
  { h.nextAll } -> std::convertible_to<H*>;
  { h.nextOrphan } -> std::convertible_to<H*>;
  { h.orphaned } -> std::convertible_to<bool>;
};

template <PooledHeap H>
class HeapPool {
 public:
  // A new heap joins the pool (not as an orphan).
  void add(H* h) noexcept {
    lock_.lock();
    h->nextAll = all_;
    all_ = h;
    lock_.unlock();
  }

  // The most recently orphaned heap, no longer an orphan, or nullptr. A sweep may be giving
  // the orphan's memory back under its lock (ThreadBoundHeap::sweepQuietHeaps), touching
  // what its owner's fast paths touch without the lock (a tier's front caches): the heap is
  // handed over only once that sweep is done, and a later one finds it no orphan.
  H* adopt() noexcept {
    lock_.lock();
    H* h = orphans_;
    if (h != nullptr) {
      orphans_ = h->nextOrphan;
      h->orphaned = false;
      h->nextOrphan = nullptr;
    }
    lock_.unlock();
    if (h != nullptr) {
      h->lock.lock();
      h->lock.unlock();
    }
    return h;
  }

  // h waits for a new thread (once, however often it is called).
  void orphan(H* h) noexcept {
    lock_.lock();
    orphanLocked(h);
    lock_.unlock();
  }

  // The first of all heaps; the rest follow through nextAll (a list that only grows at its
  // head, so walking it without the lock is safe).
  H* first() noexcept {
    lock_.lock();
    H* h = all_;
    lock_.unlock();
    return h;
  }

  // f(h) for every orphan, under the pool's lock.
  template <class F>
  void forEachOrphan(F&& f) noexcept {
    lock_.lock();
    for (H* h = orphans_; h != nullptr; h = h->nextOrphan) f(h);
    lock_.unlock();
  }

  // Fork: the pool's lock and every heap's, in that order; released in reverse.
  void lockAll() noexcept {
    lock_.lock();
    for (H* h = all_; h != nullptr; h = h->nextAll) h->lock.lock();
  }
  void unlockAll() noexcept {
    for (H* h = all_; h != nullptr; h = h->nextAll) h->lock.unlock();
    lock_.unlock();
  }

  // In a fork child, with every lock held: every heap but these two lost its thread.
  void orphanAllBut(H* mine, H* shared) noexcept {
    for (H* h = all_; h != nullptr; h = h->nextAll)
      if (h != mine && h != shared) orphanLocked(h);
  }

 private:
  void orphanLocked(H* h) noexcept {
    if (h->orphaned) return;
    h->orphaned = true;
    h->nextOrphan = orphans_;
    orphans_ = h;
  }

  SpinLock lock_;
  H* all_ = nullptr;
  H* orphans_ = nullptr;
};

}  // namespace strata
