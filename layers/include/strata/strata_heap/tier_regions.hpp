// TierRegions: the roster of a MediumTier's regions: which there are, which one new blocks
// are carved from, and which have blocks freed into them since the owner last looked.
//
// A region is a run of RegionSlots slots whose first page descriptor stands for it. The
// descriptor's free list takes the owner's frees beyond its caches; each slot's descriptor
// (otherwise unused) keeps a thread-free list for other threads' frees into that slot, so
// threads freeing into one region do not all contend on one word. A region freed into is
// marked, one bit per region (its index, kept in the descriptor's blockSize; the 64th bit is
// shared by any regions beyond 63), so a refill visits only the regions marked since the
// last one, not every region. Every list's links are read and written through the region's
// descriptor (Page::nextOf, setNext), so they are kept as the page type keeps its own.
//
// Not thread-safe but for freeRemote, which any thread calls; the owner serialises the rest.
#pragma once
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace strata {

template <class Page, std::size_t RegionSlots>
class TierRegions {
 public:
  using Block = typename Page::Block;

  Page* first() const noexcept { return head_; }
  static Page* next(const Page* p) noexcept { return static_cast<Page*>(p->next); }
  std::size_t count() const noexcept { return count_; }

  // The region whose top new blocks come from first (nullptr: none chosen).
  Page* carving = nullptr;

  // Region page joins the roster, with an index for the marks and empty thread-free lists;
  // it becomes the one carved from.
  void add(Page* page) noexcept {
    for (std::size_t i = 1; i < RegionSlots; ++i) slotList(page, i)->threadFree.store(0, std::memory_order_relaxed);
    const std::uint64_t freeIndexes = ~usedIndexes_ & (kShared - 1);
    const unsigned index = freeIndexes == 0 ? 63u : static_cast<unsigned>(std::countr_zero(freeIndexes));
    page->blockSize = index;
    if (index < 63) {
      usedIndexes_ |= std::uint64_t{1} << index;
      byIndex_[index] = page;
    }
    page->prev = nullptr;
    page->next = head_;
    if (head_ != nullptr) head_->prev = page;
    head_ = page;
    ++count_;
    carving = page;
  }

  // Region page leaves the roster (it goes back to the segment).
  void remove(Page* page) noexcept {
    if (page->prev != nullptr) page->prev->next = page->next; else head_ = next(page);
    if (page->next != nullptr) page->next->prev = page->prev;
    page->next = page->prev = nullptr;
    --count_;
    if (page->blockSize < 63) {
      usedIndexes_ &= ~(std::uint64_t{1} << page->blockSize);
      byIndex_[page->blockSize] = nullptr;
    }
    if (carving == page) carving = nullptr;
  }

  // The owner pushed a block onto region page's own list.
  void markLocal(const Page* page) noexcept { localMarks_ |= markOf(page); }

  // Another thread's free of block p of region page: one CAS onto list, the thread-free
  // list of the descriptor of p's slot; the thread that finds it empty marks the region.
  void freeRemote(const Page* page, Page* list, void* p) noexcept {
    auto* b = static_cast<Block*>(p);
    const std::uint64_t mark = markOf(page);  // before the push: then the region may go
    std::atomic<std::uintptr_t>& head = list->threadFree;
    std::uintptr_t old = head.load(std::memory_order_relaxed);
    do {
      page->setNext(b, reinterpret_cast<Block*>(old));
    } while (!head.compare_exchange_weak(old, reinterpret_cast<std::uintptr_t>(b), std::memory_order_acq_rel,
                                         std::memory_order_relaxed));
    if (old == 0) remoteMarks_.fetch_or(mark, std::memory_order_acq_rel);
  }

  // Whether any of region page's lists holds blocks.
  static bool hasPending(Page* page) noexcept {
    if (page->free != nullptr) return true;
    for (std::size_t i = 0; i < RegionSlots; ++i)
      if (slotList(page, i)->threadFree.load(std::memory_order_relaxed) != 0) return true;
    return false;
  }

  // Hands every block freed into region page (the owner's list, then the slots' thread-free
  // lists) to give, which returns true when the region went away with the block: then
  // nothing more is read of it, and drain returns true.
  template <class Give>
  static bool drain(Page* page, Give&& give) noexcept {
    auto* list = page->free;
    page->free = nullptr;
    for (std::size_t i = 0; i <= RegionSlots; ++i) {
      if (i > 0) {
        std::atomic<std::uintptr_t>& remote = slotList(page, i - 1)->threadFree;
        if (remote.load(std::memory_order_relaxed) == 0) continue;
        list = reinterpret_cast<Block*>(remote.exchange(0, std::memory_order_acquire));
      }
      while (list != nullptr) {
        Block* following = page->nextOf(list);
        if (give(list)) return true;
        list = following;
      }
    }
    return false;
  }

  // Calls f on each region marked since the last call (and clears the marks).
  template <class F>
  void forMarked(F&& f) noexcept {
    const std::uint64_t marks = localMarks_ | remoteMarks_.exchange(0, std::memory_order_acq_rel);
    localMarks_ = 0;
    if (marks == 0) return;
    if ((marks & kShared) != 0) {
      for (Page* p = head_; p != nullptr;) {
        Page* following = next(p);  // f may drop p
        if (p->blockSize == 63) f(p);
        p = following;
      }
    }
    for (std::uint64_t m = marks & (kShared - 1); m != 0; m &= m - 1) {
      Page* p = byIndex_[std::countr_zero(m)];
      if (p != nullptr) f(p);
    }
  }

  // Calls f on every region (f may drop the one it is given).
  template <class F>
  void forEach(F&& f) noexcept {
    for (Page* p = head_; p != nullptr;) {
      Page* following = next(p);
      f(p);
      p = following;
    }
  }

 private:
  static constexpr std::uint64_t kShared = std::uint64_t{1} << 63;
  static std::uint64_t markOf(const Page* page) noexcept { return std::uint64_t{1} << page->blockSize; }
  static Page* slotList(Page* page, std::size_t i) noexcept { return page + i; }

  Page* head_ = nullptr;  // the region pages, linked through next/prev
  std::size_t count_ = 0;
  std::uint64_t usedIndexes_ = 0;  // bit i: byIndex_[i] is a region
  Page* byIndex_[63] = {};
  std::uint64_t localMarks_ = 0;              // regions the owner freed into
  std::atomic<std::uint64_t> remoteMarks_{0};  // regions other threads freed into
};

}  // namespace strata
