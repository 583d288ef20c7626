// SizeClassPage: one page of equal-size blocks with two free lists, the owner's and the
// thread-free list other threads push onto (mimalloc's page; Hoard's superblock).
//
// Why: a page that only its owner thread pops from needs no lock, and a free from another
// thread costs one compare-and-swap on the page it belongs to, so memory goes back to the
// page (and the thread) it came from: no blowup when threads free each other's objects. The
// owner moves the thread-free list over to its own list in one exchange (collect) when its
// list runs dry. Blocks are carved lazily, about an OS page at a time (extend), so a page
// only becomes resident as it is used.
//
// Costs: pop and pushLocal are two loads/stores and a counter update; pushRemote is one CAS
// loop (retries only under contention on the same page); collect is one exchange plus a walk
// of the collected list (to count it). The page is a plain struct that lives in its owner's
// metadata (StrataHeap keeps the descriptors in the segment header, extended with the queue
// links of strata_heap/page_queues.hpp).
//
// Where a free block keeps its link, and how, is the Links policy's: PlainLinks, the next
// block's address in the block's first word; a hardened policy may place it further in and
// encode it (strata/hardening/encoded_links.hpp). The page's own list heads stay plain.
#pragma once
#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>

#include "strata/platform/page.hpp"

namespace strata {

// A free block's first word holds the next free block's address, as it is.
struct PlainLinks {
  static constexpr std::size_t kBytes = 8;  // a free block's bytes the link may occupy, from its start
  static void prepare() noexcept {}
  static void* next(const void* b, std::uint32_t /*blockSize*/) noexcept {
    return *static_cast<void* const*>(b);
  }
  static void setNext(void* b, void* next, std::uint32_t /*blockSize*/) noexcept {
    *static_cast<void**>(b) = next;
  }
};

// How a page reads and writes the link in a free block of blockSize bytes.
template <class L>
concept FreeBlockLinks = requires(void* b, const void* cb, std::uint32_t size) {
  { L::kBytes } -> std::convertible_to<std::size_t>;
  L::prepare();
  { L::next(cb, size) } -> std::same_as<void*>;
  L::setNext(b, b, size);
};

template <FreeBlockLinks LinksT = PlainLinks>
struct SizeClassPageOf {
  using Links = LinksT;
  // A free block, as the page's list heads point at it (its link is the Links policy's).
  struct Block;

  // ---- Owner-only state.
  Block* free = nullptr;          // the owner's free list
  std::uint32_t used = 0;         // blocks handed out and not yet back on `free`
  std::uint32_t capacity = 0;     // blocks carved so far
  std::uint32_t reserved = 0;     // blocks that fit in the page
  std::uint32_t blockSize = 0;    // bytes per block, a multiple of 16
  std::uint16_t sizeClass = 0;
  bool hasAligned = false;        // memalign handed out an interior pointer of some block
  std::byte* start = nullptr;     // the first block

  // ---- Shared with other threads.
  // The thread-free list's head, with the page's park state in its low two bits (blocks are
  // 16-byte aligned): one CAS both pushes a block and tells whether the page was parked.
  std::atomic<std::uintptr_t> threadFree{0};

  // Park states. Normal: in the owner's queue. Parked: the owner found the page full and
  // took it out of the queue. Claimed: a thread freed into the parked page and is handing it
  // back to the owner through the owner's reclaim stack; the page cannot be released until
  // the owner has taken it off that stack.
  static constexpr std::uintptr_t kNormal = 0, kParked = 1, kClaimed = 2, kStateMask = 3;

  // Makes the page hold blocks of blockSize bytes in [start, start + bytes).
  void init(std::byte* area, std::size_t bytes, std::uint32_t size, std::uint16_t cls) noexcept {
    Links::prepare();
    free = nullptr;
    used = 0;
    capacity = 0;
    reserved = static_cast<std::uint32_t>(bytes / size);
    blockSize = size;
    sizeClass = cls;
    hasAligned = false;
    start = area;
    threadFree.store(0, std::memory_order_relaxed);
  }

  // Pops a block from the owner's list, or nullptr when it is empty. Cost: two loads, a
  // store and an increment.
  void* pop() noexcept {
    Block* b = free;
    if (b == nullptr) return nullptr;
    free = nextOf(b);
    ++used;
    return b;
  }

  // Carves the next blocks (about a page's worth, at least one) onto the owner's list; false
  // when the page is fully carved already. Called only when `free` is empty.
  bool extend() noexcept {
    if (capacity == reserved) return false;
    constexpr std::uint32_t kPage = platform::kPageSize;
    std::uint32_t n = blockSize >= kPage ? 1 : kPage / blockSize;
    if (n > reserved - capacity) n = reserved - capacity;
    std::byte* first = start + std::size_t{capacity} * blockSize;
    Block* head = free;
    for (std::uint32_t i = n; i-- > 0;) {
      auto* b = reinterpret_cast<Block*>(first + std::size_t{i} * blockSize);
      setNext(b, head);
      head = b;
    }
    free = head;
    capacity += n;
    return true;
  }

  // The owner gives a block back. Returns the count of blocks still out.
  std::uint32_t pushLocal(void* p) noexcept {
    auto* b = static_cast<Block*>(p);
    setNext(b, free);
    free = b;
    return --used;
  }

  // Any other thread gives a block back: one CAS onto the thread-free list. Returns true
  // when the page was parked: this thread has then claimed it and must hand it to the owner
  // (PageQueues pushes it onto the owner's reclaim stack).
  bool pushRemote(void* p) noexcept {
    auto* b = static_cast<Block*>(p);
    std::uintptr_t old = threadFree.load(std::memory_order_relaxed);
    std::uintptr_t state;
    do {
      state = old & kStateMask;
      setNext(b, reinterpret_cast<Block*>(old & ~kStateMask));
    } while (!threadFree.compare_exchange_weak(
        old, reinterpret_cast<std::uintptr_t>(b) | (state == kParked ? kClaimed : state),
        std::memory_order_acq_rel, std::memory_order_relaxed));
    return state == kParked;
  }

  // The owner takes the thread-free list over onto its own list (the park state stays);
  // returns how many blocks came back.
  std::uint32_t collect() noexcept {
    std::uintptr_t old = threadFree.load(std::memory_order_relaxed);
    if ((old & ~kStateMask) == 0) return 0;
    while (!threadFree.compare_exchange_weak(old, old & kStateMask, std::memory_order_acquire,
                                             std::memory_order_relaxed)) {
    }
    Block* list = reinterpret_cast<Block*>(old & ~kStateMask);
    if (list == nullptr) return 0;
    std::uint32_t n = 1;
    Block* tail = list;
    for (Block* following; (following = nextOf(tail)) != nullptr; tail = following) ++n;
    setNext(tail, free);
    free = list;
    used -= n;
    return n;
  }

  std::uintptr_t parkState() const noexcept {
    return threadFree.load(std::memory_order_acquire) & kStateMask;
  }

  // Owner: marks a full page parked; fails (returns false) if a block arrived meanwhile.
  bool tryPark() noexcept {
    std::uintptr_t expected = kNormal;
    return threadFree.compare_exchange_strong(expected, kParked, std::memory_order_acq_rel);
  }

  // Owner: takes a parked page back (normal again); false if another thread claimed it.
  bool tryUnpark() noexcept {
    std::uintptr_t old = threadFree.load(std::memory_order_relaxed);
    while ((old & kStateMask) == kParked) {
      if (threadFree.compare_exchange_weak(old, (old & ~kStateMask) | kNormal,
                                           std::memory_order_acq_rel))
        return true;
    }
    return false;
  }

  // Owner: a claimed page came off the reclaim stack: normal again.
  void unclaim() noexcept {
    std::uintptr_t old = threadFree.load(std::memory_order_relaxed);
    while (!threadFree.compare_exchange_weak(old, old & ~kStateMask, std::memory_order_acq_rel)) {
    }
  }

  // The block holding p (p may be an interior pointer handed out by memalign).
  void* blockOf(void* p) const noexcept {
    if (!hasAligned) return p;
    const std::size_t off = static_cast<std::size_t>(static_cast<std::byte*>(p) - start);
    return start + off - off % blockSize;
  }

  // Bytes usable from p to the end of its block.
  std::size_t usableFrom(void* p) const noexcept {
    if (!hasAligned) return blockSize;
    const std::size_t off = static_cast<std::size_t>(static_cast<std::byte*>(p) - start);
    return blockSize - off % blockSize;
  }

  bool contains(const void* p) const noexcept {
    const auto* b = static_cast<const std::byte*>(p);
    return b >= start && b < start + std::size_t{reserved} * blockSize;
  }

  // The link of free block b, as this page keeps it (a layer that keeps lists through a
  // page's descriptor, as MediumTier's regions do, reads and writes them through these).
  Block* nextOf(const void* b) const noexcept { return static_cast<Block*>(Links::next(b, blockSize)); }
  void setNext(void* b, void* next) const noexcept { Links::setNext(b, next, blockSize); }
};

using SizeClassPage = SizeClassPageOf<>;

}  // namespace strata
