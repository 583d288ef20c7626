// PageQueues: one owner's size-class pages (the page store): per class the current page and a
// queue of pages with room, a list of parked full pages, and a stack through which other
// threads hand parked pages back. Pages come from Super (DelayedPurge over SegmentSlots).
//
// Classes: the small ones of Classes (blocks carved lazily from pages of about 8 blocks, at
// least one slot), then "large" ones, one block of a whole number of slots per page, up to a
// segment less its header slot (MaxSize), so big objects reuse segment memory too.
//
// A refill (the current page is dry) takes back pages other threads claimed, collects
// thread-free lists, reuses freed blocks of any page of the class before carving new ones,
// parks full pages, and only then starts a new page: the resident size follows the live size.
// Ownership (Hoard's rule): a block freed by another thread goes back to its page's
// thread-free list (one CAS), so it is reused by the owner. A page found full is parked with
// one CAS; the first thread to free into it claims it in the same CAS and pushes it onto the
// owner's reclaim stack, so memory held is bounded by live memory plus, per class, the pages
// not yet refilled from. An empty page goes back to Super (the last one of a small class is
// kept, so churn around zero does not thrash), except while the heap is over Super's
// allowance of free memory: then no empty page is kept, so a thread that freed most of what
// it had leaves whole segments empty for other threads.
//
// Fast paths: pop (two loads, two stores) and pushLocal; everything else is the owner's,
// under its lock, except freeRemote.
#pragma once
#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>

#include "strata/building/size_class_page.hpp"
#include "strata/concepts.hpp"
#include "strata/platform/memory.hpp"
#include "strata/strata_heap/accounted_segments.hpp"

namespace strata {

// A size-class page as the page store keeps it: queue links, the reclaim link, its flags.
// Links: how its free blocks keep their links (size_class_page.hpp).
template <FreeBlockLinks Links = PlainLinks>
struct QueuedPageOf : SizeClassPageOf<Links> {
  QueuedPageOf* next = nullptr;         // the owner's class queue or full list
  QueuedPageOf* prev = nullptr;
  QueuedPageOf* reclaimNext = nullptr;  // link in the owner's reclaim stack (while claimed)
  bool inFullList = false;            // parked in the owner's full list
  bool zeroTail = false;              // blocks not carved yet read as zero
  bool pinned = false;                // the current page of a small class: kept when empty
};

using QueuedPage = QueuedPageOf<>;

// What PageQueues needs of its parent: runs of slots as QueuedPages and their release.
template <class S>
concept PageSource =
    std::derived_from<typename S::PageType, QueuedPageOf<typename S::PageType::Links>> &&
    requires(S& s, const S& cs, typename S::PageType* page, std::size_t n, typename S::Span& span) {
  { s.takeSlots(n, n, span) } -> std::same_as<typename S::PageType*>;
  s.releasePage(page);
  s.maybePurge();
  { cs.overAllowance() } -> std::same_as<bool>;
  { s.source().nowMs() } -> std::same_as<std::uint64_t>;
  { s.source().tunables().purgeDelayMs } -> std::convertible_to<std::uint64_t>;
  s.purgeAll(platform::Decommit::Now);
  { s.source().addInUse(n) } -> std::same_as<void>;
  { S::SlotSize } -> std::convertible_to<std::size_t>;
  { S::Slots } -> std::convertible_to<std::size_t>;
};

template <SizeClasses Classes, PageSource Super>
class PageQueues : public Super {
 public:
  using Page = typename Super::PageType;
  static constexpr std::size_t SlotSize = Super::SlotSize;
  static constexpr std::size_t MaxSmall = Classes::MaxClassSize;
  static constexpr unsigned ClassCount = Classes::Count;
  static constexpr std::size_t MaxSize = (Super::Slots - 1) * SlotSize;
  static constexpr unsigned AllClasses = ClassCount + static_cast<unsigned>(Super::Slots);
  static_assert(MaxSmall * 8 <= Super::Slots / 2 * SlotSize, "a page of the largest class fits");

  template <class... A>
  explicit PageQueues(A&&... a) noexcept : Super(static_cast<A&&>(a)...) {
    for (auto& c : current_) c = &emptyPage_;
  }

  // The class of a request of n <= MaxSize bytes: small ones, then one per slot count.
  static unsigned classOf(std::size_t n) noexcept {
    if (n <= MaxSmall) [[likely]] return Classes::size2class(n);
    return ClassCount + static_cast<unsigned>((n + SlotSize - 1) >> Super::SlotShift);
  }

  // Fast path: a block of class c from the current page, or nullptr (then refill).
  void* pop(unsigned c) noexcept { return current_[c]->pop(); }

  // Usable bytes from p (handed out from page) to the end of its block.
  static std::size_t usableFrom(const Page* page, const void* p) noexcept {
    return page->usableFrom(const_cast<void*>(p));
  }

  // Fast path: the owner gives block b of page back; true when the slow path must follow
  // (a page other than a small class's current one emptied, or the page was parked):
  // freeLocalSlow under the owner's lock. A current page that empties stays (as the last
  // page of a class would), so malloc/free pairs never leave the fast path.
  static bool pushLocal(Page* page, void* b) noexcept {
    return (page->pushLocal(b) == 0 && !page->pinned) || page->inFullList;
  }

  // Any other thread gives a block back: one CAS; a parked page is claimed and handed to
  // its owner's reclaim stack.
  static void freeRemote(PageQueues* owner, Page* page, void* b) noexcept {
    if (!page->pushRemote(b)) [[likely]] return;
    Page* head = owner->reclaim_.load(std::memory_order_relaxed);
    do {
      page->reclaimNext = head;
    } while (!owner->reclaim_.compare_exchange_weak(head, page, std::memory_order_release,
                                                    std::memory_order_relaxed));
  }

  // The current page of class c is dry: see the header. `fresh` says the block was carved
  // just now from memory that reads as zero (calloc need not clear it).
  void* refill(unsigned c, bool& fresh) noexcept {
    fresh = false;
    drainReclaim();
    Super::maybePurge();
    endShedding();
    Queue& q = queue_[c];
    Page* carvable = nullptr;
    for (Page* page = q.first; page != nullptr;) {
      page->collect();
      if (page->free != nullptr) {
        setCurrent(c, page);
        return popLarge(c, page);
      }
      if (page->capacity < page->reserved) {
        if (carvable == nullptr) carvable = page;
        page = next(page);
        continue;
      }
      if (!page->tryPark()) continue;  // a block just arrived: collect it
      Page* following = next(page);
      if (current_[c] == page) setCurrent(c, &emptyPage_);
      unlink(q, page);
      pushBack(full_, page);
      page->inFullList = true;
      page = following;
    }
    Page* page = carvable;
    if (page == nullptr) {
      setCurrent(c, &emptyPage_);
      page = newPage(c);
      if (page == nullptr) return nullptr;
      pushFront(q, page);
    }
    setCurrent(c, page);
    extend(page);
    fresh = page->zeroTail;
    return popLarge(c, page);
  }

  // The owner freed into a parked page (take it back) or emptied a page (retire it).
  void freeLocalSlow(Page* page) noexcept {
    if (page->inFullList && page->tryUnpark()) {
      unlink(full_, page);
      page->inFullList = false;
      pushBack(queue_[page->sizeClass], page);
    }
    if (page->used == 0 && !page->inFullList) {
      retire(page, !shedding_);
      shedIfOverAllowance();
    }
  }

  // Collects every page and releases the empty ones; then decommits everything free (Now:
  // trim, the resident size drops at once) or leaves it to the purge policy (Lazy: thread
  // exit; the thread that adopts the heap next reuses it warm, with no page faults and no
  // system calls, and an orphan nobody adopts goes back at the next sweep).
  void tidy(platform::Decommit how = platform::Decommit::Now) noexcept {
    drainReclaim();
    for (unsigned c = 0; c < AllClasses; ++c) {
      for (Page* page = queue_[c].first; page != nullptr;) {
        Page* following = next(page);
        page->collect();
        if (page->used == 0) retire(page, false);
        page = following;
      }
    }
    if (how == platform::Decommit::Now) {
      Super::purgeAll(platform::Decommit::Now);
    } else {
      Super::maybePurge();
    }
  }

 protected:
  // A layer above serves class c itself: pop takes from front's free list, and the layer's
  // refill (not this one's) fills it. front holds no blocks of its own (reserved == 0).
  void setFront(unsigned c, Page* front) noexcept { current_[c] = front; }
  // Over the allowance: the heap keeps no empty memory (see shedKeptPages).
  bool shedding() const noexcept { return shedding_; }
  // An episode of shedding begins if the heap went over its allowance (a layer above that
  // released memory of its own calls it too: the medium tier's regions).
  void shedIfOverAllowance() noexcept {
    if (!shedding_ && Super::overAllowance()) shedKeptPages();
  }
  // A refill: the episode of shedding ends once the heap is within its allowance again.
  void endShedding() noexcept {
    if (shedding_ && !Super::overAllowance()) shedding_ = false;
  }

 private:
  struct Queue {
    Page* first = nullptr;
    Page* last = nullptr;
  };

  static Page* next(Page* p) noexcept { return static_cast<Page*>(p->next); }

  // Slots a page of class c spans: room for about 8 blocks, at least one slot (small
  // classes); the block itself (large classes).
  static constexpr std::size_t slotsFor(unsigned c) noexcept {
    if (c >= ClassCount) return c - ClassCount;
    const std::size_t s = (Classes::class2size(c) * 8 + SlotSize - 1) / SlotSize;
    return s < 1 ? 1 : s;
  }
  static constexpr std::size_t classSize(unsigned c) noexcept {
    return c >= ClassCount ? (c - ClassCount) * SlotSize : Classes::class2size(c);
  }

  Page* newPage(unsigned c) noexcept {
    typename Super::Span span;
    Page* page = Super::takeSlots(slotsFor(c), c >= ClassCount ? 1 : 0, span);
    if (page == nullptr) return nullptr;
    page->init(span.area, span.bytes, static_cast<std::uint32_t>(classSize(c)),
               static_cast<std::uint16_t>(c));
    page->next = page->prev = page->reclaimNext = nullptr;
    page->inFullList = false;
    page->pinned = false;
    page->zeroTail = span.zero;
    return page;
  }

  // The class's current page; a small class's is pinned (see pushLocal).
  void setCurrent(unsigned c, Page* page) noexcept {
    if (current_[c] != &emptyPage_) current_[c]->pinned = false;
    if (page != &emptyPage_ && c < ClassCount) page->pinned = true;
    current_[c] = page;
  }

  // The heap went over Super's allowance (it holds more free memory than it keeps): until a
  // refill finds it within the allowance again, it keeps no empty page. Each small class's
  // current page is unpinned (released now if empty, else when it empties) and the last page
  // of a class is not kept, so a thread that freed most of its memory leaves whole segments
  // empty, for Super to pass on to other threads, instead of one kept page in each. At most
  // once per purge delay: a heap whose free memory hovers at the allowance does not lose its
  // current pages over and over.
  void shedKeptPages() noexcept {
    const std::uint64_t now = Super::source().nowMs();
    if (now < nextShed_) return;
    nextShed_ = now + Super::source().tunables().purgeDelayMs;
    shedding_ = true;
    for (unsigned c = 0; c < ClassCount; ++c) {
      Page* page = current_[c];
      if (page == &emptyPage_ || page->reserved == 0) continue;  // a layer's front, not a page
      page->pinned = false;
      if (page->used == 0) retire(page, false);
    }
  }

  // Pops the block of page (class c); a large class's page, now full, is parked at once.
  // Its one block is freed by whichever thread: a free by another thread then claims it for
  // the owner's next refill of any class, instead of waiting on the thread-free list for
  // the next refill of this class, which may be long in coming (one page of each large
  // class per heap would stay held, megabytes each).
  void* popLarge(unsigned c, Page* page) noexcept {
    void* b = page->pop();
    if (c >= ClassCount && b != nullptr && page->tryPark()) {
      setCurrent(c, &emptyPage_);
      unlink(queue_[c], page);
      pushBack(full_, page);
      page->inFullList = true;
    }
    return b;
  }

  // Carves more blocks and counts them as in use.
  void extend(Page* page) noexcept {
    const std::uint32_t before = page->capacity;
    if (page->extend()) Super::source().addInUse(std::size_t{page->capacity - before} * page->blockSize);
  }

  // Pages other threads claimed go back to their class queues (released if empty).
  void drainReclaim() noexcept {
    Page* q = reclaim_.exchange(nullptr, std::memory_order_acquire);
    while (q != nullptr) {
      Page* page = q;
      q = static_cast<Page*>(q->reclaimNext);
      page->unclaim();
      unlink(full_, page);
      page->inFullList = false;
      pushBack(queue_[page->sizeClass], page);
      page->collect();
      if (page->used == 0) retire(page, true);
    }
  }

  // An empty page leaves its queue and goes back to Super, unless keepLast and it is the
  // only page of its small class.
  void retire(Page* page, bool keepLast) noexcept {
    Queue& q = queue_[page->sizeClass];
    if (keepLast && page->sizeClass < ClassCount && q.first == page && q.last == page) return;
    if (current_[page->sizeClass] == page) setCurrent(page->sizeClass, &emptyPage_);
    unlink(q, page);
    Super::source().subInUse(std::size_t{page->capacity} * page->blockSize);
    Super::releasePage(page);
  }

  static void pushBack(Queue& q, Page* p) noexcept {
    p->next = nullptr;
    p->prev = q.last;
    if (q.last) q.last->next = p; else q.first = p;
    q.last = p;
  }
  static void pushFront(Queue& q, Page* p) noexcept {
    p->prev = nullptr;
    p->next = q.first;
    if (q.first) q.first->prev = p; else q.last = p;
    q.first = p;
  }
  static void unlink(Queue& q, Page* p) noexcept {
    if (p->prev) p->prev->next = p->next; else q.first = static_cast<Page*>(p->next);
    if (p->next) p->next->prev = p->prev; else q.last = static_cast<Page*>(p->prev);
    p->next = p->prev = nullptr;
  }

  static inline constinit Page emptyPage_{};

  Page* current_[AllClasses];
  Queue queue_[AllClasses];
  Queue full_;                                  // parked pages, every class
  std::atomic<Page*> reclaim_{nullptr};  // claimed pages handed back by others
  bool shedding_ = false;                       // over the allowance: no empty page kept
  std::uint64_t nextShed_ = 0;                  // no new episode of shedding before (ms)
};

}  // namespace strata
