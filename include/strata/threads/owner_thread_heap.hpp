// OwnerThreadHeap: per-thread heaps of size-class pages with ownership, the design of
// mimalloc (pages in aligned segments, a thread-free list per page) with Hoard's rule that
// memory goes back to the heap that owns it.
//
// Layout. Super (a SegmentHeap) hands out SegmentSize-aligned segments. A segment belongs to
// one thread heap (LocalHeap) and is cut into 2^SlotBits-byte slots (64 KiB by default, at
// most 64 slots a segment); a page is a run of slots (1 slot for blocks up to 8 KiB, more
// for bigger classes, so a page holds at least ~8 blocks) of blocks of one size class
// (SizeClassPage). The segment header, in slot 0,
// holds the page descriptors, so free finds an object's page from its address: segment map
// lookup (two loads), a shift, a byte load. Requests above Classes::MaxClassSize up to a
// segment less one slot (4032 KiB by default) are "large": a page of whole slots holding one
// block, so they reuse segment memory like small pages do. Bigger requests, and alignments a block cannot give,
// are "huge": a chunk of their own from Super, with a 64-byte header, unmapped on free.
//
// A refill (the current page is dry) takes back pages other threads claimed, reuses freed
// blocks of any page of the class before carving new ones, parks full pages, and only then
// starts a new page: the resident size follows the live size.
//
// Fast paths. malloc: a TLS load and compare (is this thread bound to this heap?), the class
// computation, and a pop from the class's current page (two loads and two stores). free:
// the segment lookup, the page descriptor, then, when the calling thread owns the segment,
// a push onto the page's local list; otherwise one CAS onto the page's thread-free list.
//
// Ownership and bounded blowup. The owner moves a page's thread-free list over to its own
// list when the page runs dry, so blocks freed by other threads are reused by the thread
// that owns them. A page found full is parked (taken out of its class queue) with one CAS
// that also marks its thread-free word; the first thread to free into a parked page claims
// it in the same CAS and pushes it onto the owner's reclaim stack, so the owner gets it back
// on its next refill. Memory held is thus bounded by live memory plus, per class, the pages
// not yet refilled from (a producer/consumer pair stays within a small factor of its live
// set; tests/owner_thread_heap_test.cpp measures it).
//
// Empty memory. A page whose blocks are all back is released to its segment (the last
// empty page of a class is kept, so churn around zero does not thrash); new pages take
// released, still-committed slots first. A heap keeps up to MaxDirtySlots plus 1/8 of its
// used slots released but committed for good. Beyond that, released memory is given back
// after a delay (PurgeDelayMs, as jemalloc's dirty decay and mimalloc's purge delay): a
// segment's released slots are decommitted with MADV_FREE (the kernel takes the pages when
// it needs them), and a segment with no page goes back to Super (which caches a few,
// decommitted), once PurgeDelayMs have passed since the segment got its first released
// slot (since it emptied, for a whole segment). So a program whose live set shrinks and
// grows again within the delay reuses its memory without system calls or page faults.
// When memory goes back: there is no background thread; the delay is checked (with
// CLOCK_MONOTONIC_COARSE, only while the heap holds more than its allowance) on the
// owner's slow paths only, i.e. at the first page refill (a malloc whose current page is
// dry) or page release (a free that empties a page) after the delay, and never on the
// malloc/free fast paths. A heap that is not called again keeps the memory until
// malloc_trim or thread exit. Hard bound: a heap holding more than MaxDelayedBytes
// released purges it all at once, so a program that frees a lot does not hold unbounded
// memory for the delay. trim() (malloc_trim) and thread exit release and decommit
// everything of the calling thread's heap and the orphaned ones at once, with
// MADV_DONTNEED, so the resident size drops at once. (MADV_FREE rather than MADV_DONTNEED
// on the automatic path: grow-shrink-1t of bench/preload_table went from 1.41x to 1.22x
// glibc's time, its peak RSS from 1.03x to 1.05x.)
//
// Threads. Each thread binds to a LocalHeap on its first malloc (an initial-exec TLS record:
// this heap's id and the LocalHeap; no constructor, so no __cxa_thread_atexit). A
// process-wide pthread key's destructor orphans the heap when the thread exits (its empty
// pages are released first); the next new thread adopts an orphan before making a new heap.
// After its exit destructor ran, a thread allocates from a shared heap behind a spin lock
// (and frees like a foreign thread), so late frees and mallocs in thread teardown work.
// Fork: prepareFork() takes every lock (registry, pool, each heap, Super's); in the child,
// heaps of the threads that no longer exist become orphans.
//
// Foreign pointers. free() ignores, and getSize() answers 0 for: addresses in no segment of
// this heap (stack, globals, other allocators, other OwnerThreadHeaps), addresses in a
// segment's header or in a slot no page occupies, interior addresses of large blocks and
// huge objects (anything but the object's start, unless memalign handed it out). Not detected: a double free or an interior pointer of a small block (it
// corrupts that page's free list, as in glibc's fastbins and mimalloc without secure mode).
// Signal handlers: malloc is not async-signal-safe here either (as in glibc).
#pragma once
#include <pthread.h>
#include <sys/mman.h>
#include <time.h>

#include <atomic>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <new>

#include "strata/building/size_class_page.hpp"
#include "strata/combining/fine_size_classes.hpp"
#include "strata/concepts.hpp"
#include "strata/detail/align.hpp"
#include "strata/detail/spin_lock.hpp"

namespace strata {

// What OwnerThreadHeap needs of its parent: aligned chunks with a segment map (SegmentHeap).
template <class S>
concept SegmentSource = requires(S& s, const S& cs, std::size_t n, void* p) {
  { cs.chunkOf(p) } -> std::same_as<void*>;
  { s.malloc(n) } -> std::same_as<void*>;
  { s.mallocAligned(n, n, n) } -> std::same_as<void*>;
  { s.free(p) } -> std::same_as<void>;
  { S::getSize(p) } -> std::same_as<std::size_t>;
  { s.trim() } -> std::same_as<std::size_t>;
  s.lockAll();
  s.unlockAll();
  { S::SegmentSize } -> std::convertible_to<std::size_t>;
  { S::HeaderBytes } -> std::convertible_to<std::size_t>;
};

// Figures for mallinfo2 / malloc_stats.
struct StrataHeapStats {
  std::size_t bytesFromSystem;      // committed: segment headers, slots in use or not yet
                                    // decommitted, huge chunks
  std::size_t bytesInUse;           // bytes of blocks carved in live pages plus huge objects
                                    // (an upper bound on live bytes)
  std::size_t peakBytesFromSystem;  // the high-water mark of bytesFromSystem
};

namespace detail {

// A thread's binding: which OwnerThreadHeap (by id) and which of its LocalHeaps.
struct OwnerThreadBinding {
  std::uint64_t instance;
  void* heap;
  bool exited;  // the thread-exit destructor ran: use the shared heap from now on
};

// Zero-initialised and trivially destructible: no TLS constructor, no __cxa_thread_atexit.
// Always named directly (never through a reference): GCC 12's UBSan null check of a
// reference to an initial-exec TLS object tests stale flags and reports a false null.
inline thread_local OwnerThreadBinding ownerBinding __attribute__((tls_model("initial-exec")));

// Live OwnerThreadHeaps, so that a thread's exit can orphan its heap in the instance it is
// bound to, and never touch one that was destroyed. One process-wide pthread key.
struct OwnerRegistry {
  struct Entry {
    std::uint64_t id;
    void* instance;
    void (*orphan)(void* instance, void* heap);
  };
  static constexpr unsigned kMax = 64;
  SpinLock lock;
  bool keyMade = false;
  pthread_key_t key = 0;
  std::uint64_t nextId = 1;
  Entry live[kMax] = {};

  // Orphans the heap b is bound to, if its instance still lives; the caller holds `lock`.
  void orphanLocked() noexcept {
    for (Entry& e : live)
      if (e.id != 0 && e.id == ownerBinding.instance) e.orphan(e.instance, ownerBinding.heap);
    ownerBinding.instance = 0;
    ownerBinding.heap = nullptr;
  }
};

constinit inline OwnerRegistry ownerRegistry;

// The key's destructor: orphans the exiting thread's heap.
inline void ownerThreadExit(void*) noexcept {
  ownerRegistry.lock.lock();
  ownerRegistry.orphanLocked();
  ownerRegistry.lock.unlock();
  ownerBinding.exited = true;
}

}  // namespace detail

template <class Super, SizeClasses Classes = FineSizeClasses<>, unsigned SlotBits = 16>
  requires SegmentSource<Super>
class OwnerThreadHeap : public Super {
 public:
  static constexpr std::size_t Alignment = 16;
  static constexpr unsigned SlotShift = SlotBits;
  static constexpr std::size_t SlotSize = std::size_t{1} << SlotShift;
  static constexpr std::size_t SegmentSize = Super::SegmentSize;
  static constexpr std::size_t Slots = SegmentSize / SlotSize;
  static constexpr std::size_t MaxSmall = Classes::MaxClassSize;
  static constexpr unsigned ClassCount = Classes::Count;
  static constexpr std::size_t MaxAlign = std::size_t{1} << 30;
  // Above MaxSmall, up to MaxLarge: "large" classes, one block a page, a whole number of
  // slots (never slot 0), so big objects reuse segment memory instead of mmap calls.
  static constexpr std::size_t MaxLarge = (Slots - 1) * SlotSize;
  static constexpr unsigned AllClasses = ClassCount + static_cast<unsigned>(Slots);
  // Released slots a heap keeps committed: MaxDirtySlots plus an eighth of its used slots.
  static constexpr std::size_t MaxDirtySlots = 4;
  // Released memory beyond that allowance stays committed this long (see the header).
  static constexpr std::uint64_t PurgeDelayMs = 250;
  // ... unless a heap holds more than this many bytes released: then it purges at once.
  static constexpr std::size_t MaxDelayedBytes = std::size_t{512} << 20;
  // Freed huge chunks kept for reuse (committed): at most this many, this many bytes.
  static constexpr std::size_t HugeCacheChunks = 16;
  static constexpr std::size_t HugeCacheBytes = std::size_t{128} << 20;
  static_assert(Slots >= 16 && Slots <= 64, "a segment holds 16..64 slots (a 64-bit mask)");
  static_assert(MaxSmall * 8 <= Slots / 2 * SlotSize, "a page of the largest class fits");

  OwnerThreadHeap() noexcept {
    auto& reg = detail::ownerRegistry;
    reg.lock.lock();
    if (!reg.keyMade)
      reg.keyMade = ::pthread_key_create(&reg.key, [](void* v) { detail::ownerThreadExit(v); }) == 0;
    id_ = reg.nextId++;
    for (auto& e : reg.live) {
      if (e.id == 0) {
        e = {id_, this, &orphanThunk};
        break;
      }
    }
    reg.lock.unlock();
    shared_ = makeHeap();
  }

  OwnerThreadHeap(const OwnerThreadHeap&) = delete;
  OwnerThreadHeap& operator=(const OwnerThreadHeap&) = delete;

  // Forgets the registry entry and the heaps' metadata; Super unmaps every segment.
  ~OwnerThreadHeap() {
    auto& reg = detail::ownerRegistry;
    reg.lock.lock();
    for (auto& e : reg.live)
      if (e.id == id_) e = {};
    reg.lock.unlock();
    if (detail::ownerBinding.instance == id_) {
      detail::ownerBinding.instance = 0;
      detail::ownerBinding.heap = nullptr;
    }
    for (LocalHeap* h = all_; h != nullptr;) {
      LocalHeap* next = h->nextAll;
      ::munmap(h, kHeapBytes);
      h = next;
    }
  }

  // Fast path: TLS check, class computation, pop from the current page.
  void* malloc(std::size_t n) noexcept {
    unsigned c;
    if (n <= MaxSmall) [[likely]]
      c = Classes::size2class(n);
    else if (n <= MaxLarge)
      c = ClassCount + static_cast<unsigned>((n + SlotSize - 1) >> SlotShift);
    else
      return mallocHuge(n, Alignment);
    if (LocalHeap* h = localHeap()) [[likely]] {
      if (void* b = h->current[c]->pop()) [[likely]] return b;
      return mallocSlow(h, c);
    }
    return mallocShared(c);
  }

  // Fast path: segment lookup, page descriptor, a local push (owner) or one CAS (others).
  void free(void* p) noexcept {
    if (p == nullptr) return;
    void* chunk = Super::chunkOf(p);
    if (chunk == nullptr) return;
    auto* seg = static_cast<Segment*>(chunk);
    if (seg->kind != kSegmentKind) [[unlikely]] {
      freeHuge(chunk, p);
      return;
    }
    const std::size_t slot = (addr(p) - addr(seg)) >> SlotShift;
    SizeClassPage* page = &seg->pages[seg->spanOf[slot]];
    if (!page->inUse || static_cast<std::byte*>(p) < page->start) [[unlikely]] return;
    if (page->reserved == 1 && p != page->start && !page->hasAligned) [[unlikely]] return;
    void* b = page->blockOf(p);
    if (detail::ownerBinding.instance == id_ && seg->owner == detail::ownerBinding.heap) [[likely]] {
      if (page->pushLocal(b) == 0 || page->inFullList) [[unlikely]]
        freeLocalSlow(seg->owner, page);
      return;
    }
    freeRemote(seg, page, b);
  }

  // Usable bytes from p to the end of its block; 0 for nullptr and foreign pointers.
  std::size_t getSize(void* p) const noexcept {
    if (p == nullptr) return 0;
    void* chunk = Super::chunkOf(p);
    if (chunk == nullptr) return 0;
    auto* seg = static_cast<Segment*>(chunk);
    if (seg->kind == kSegmentKind) {
      const std::size_t slot = (addr(p) - addr(seg)) >> SlotShift;
      const SizeClassPage* page = &seg->pages[seg->spanOf[slot]];
      if (!page->inUse || static_cast<std::byte*>(p) < page->start) return 0;
      if (page->reserved == 1 && p != page->start && !page->hasAligned) return 0;
      return page->usableFrom(p);
    }
    auto* h = static_cast<HugeHeader*>(chunk);
    if (h->kind != kHugeKind || addr(p) != addr(chunk) + h->objectOffset) return 0;
    return Super::getSize(chunk) - h->objectOffset;
  }

  // n bytes aligned to align (a power of two up to 1 GiB), freed by free(); nullptr with
  // errno = EINVAL for a bad alignment, ENOMEM when out of memory. Small requests take a
  // block of n + align - 16 bytes and hand out its aligned interior (the page is marked so
  // free and getSize find the block start); the rest is a huge chunk.
  void* memalign(std::size_t align, std::size_t n) noexcept {
    if (!detail::is_pow2(align) || align > MaxAlign) {
      errno = EINVAL;
      return nullptr;
    }
    if (align <= Alignment) return malloc(n);
    std::size_t need;
    if (detail::checked_add(n, align - Alignment, need) && need <= MaxLarge) {
      void* b = malloc(need);
      if (b == nullptr) return nullptr;
      void* q = reinterpret_cast<void*>(detail::align_up(addr(b), align));
      if (q != b) pageOf(b)->hasAligned = true;
      return q;
    }
    return mallocHuge(n, align);
  }

  // p resized to n bytes without moving, or nullptr (p untouched) when the block is too
  // small, or so much larger than n that moving saves memory.
  void* reallocInPlace(void* p, std::size_t n) noexcept {
    const std::size_t usable = getSize(p);
    if (usable == 0 || n > usable) return nullptr;
    if (n < usable / 2 && usable > 64) return nullptr;
    return p;
  }

  // Releases empty pages and decommits free slots of the calling thread's heap, the orphans
  // and the shared heap; unmaps Super's cached segments. Returns 1 if anything went back.
  // (Heaps of other running threads are theirs alone; they release on their own.)
  int trim(std::size_t = 0) noexcept {
    const std::size_t before = committed_.load(std::memory_order_relaxed);
    if (detail::ownerBinding.instance == id_)
      tidy(static_cast<LocalHeap*>(detail::ownerBinding.heap));
    poolLock_.lock();
    for (LocalHeap* h = orphans_; h != nullptr; h = h->nextOrphan) tidy(h);
    poolLock_.unlock();
    tidy(shared_);
    const std::size_t unmapped = Super::trim() + dropHugeCache();
    return unmapped > 0 || committed_.load(std::memory_order_relaxed) < before ? 1 : 0;
  }

  // pthread_atfork handlers: every lock this heap takes, in its order.
  void prepareFork() noexcept {
    detail::ownerRegistry.lock.lock();
    poolLock_.lock();
    for (LocalHeap* h = all_; h != nullptr; h = h->nextAll) h->lock.lock();
    hugeLock_.lock();
    Super::lockAll();
  }
  void parentAfterFork() noexcept { unlockAfterFork(); }
  // In the child only the forking thread exists: every other bound heap becomes an orphan.
  void childAfterFork() noexcept {
    LocalHeap* mine = detail::ownerBinding.instance == id_
                          ? static_cast<LocalHeap*>(detail::ownerBinding.heap)
                          : nullptr;
    for (LocalHeap* h = all_; h != nullptr; h = h->nextAll) {
      if (h != mine && h != shared_ && !h->orphaned) {
        h->orphaned = true;
        h->nextOrphan = orphans_;
        orphans_ = h;
      }
    }
    unlockAfterFork();
  }

  StrataHeapStats stats() const noexcept {
    return {committed_.load(std::memory_order_relaxed), inUse_.load(std::memory_order_relaxed),
            peak_.load(std::memory_order_relaxed)};
  }

 private:
  static constexpr std::uintptr_t kSegmentKind = 0x5e6e5e6e;
  static constexpr std::uintptr_t kHugeKind = 0x4a6e4a6e;
  static constexpr std::size_t kHugeHeader = 64;
  static constexpr std::uint64_t kAllSlots = Slots == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << Slots) - 1;
  static constexpr std::uint64_t kNever = ~std::uint64_t{0};
  static constexpr std::size_t kMaxDelayedSlots = MaxDelayedBytes / SlotSize;

  struct Queue {
    SizeClassPage* first = nullptr;
    SizeClassPage* last = nullptr;
  };

  struct LocalHeap;

  // The header at the start of every segment (slot 0).
  struct Segment {
    std::size_t superHeader[Super::HeaderBytes / sizeof(std::size_t)];
    std::uintptr_t kind;
    LocalHeap* owner;
    Segment* next;
    Segment* prev;
    std::uint64_t freeSlots;   // bit i: slot i holds no page
    std::uint64_t dirtySlots;  // bit i: slot i is free but still committed
    std::uint64_t dirtyAt;     // ms (coarse clock) its first dirty slot was released or
                               // it became empty; its dirty slots go PurgeDelayMs later
    std::size_t maxRun;        // longest run of free slots from slot 1 on (its byRun list)
    std::uint8_t spanOf[Slots];  // slot -> first slot of the page covering it
    SizeClassPage pages[Slots];  // descriptor of the page starting at each slot
  };
  static constexpr std::size_t kSegmentHeader = detail::align_up(sizeof(Segment), 4096);
  static_assert(kSegmentHeader < SlotSize / 2);

  struct HugeHeader {
    std::size_t superHeader[Super::HeaderBytes / sizeof(std::size_t)];
    std::uintptr_t kind;
    std::size_t objectOffset;
  };
  static_assert(sizeof(HugeHeader) <= kHugeHeader);

  // A thread's heap: per class, the current page and the queue of pages with room.
  struct LocalHeap {
    SizeClassPage* current[AllClasses];
    Queue queue[AllClasses];
    Queue full;                                   // parked pages, every class
    std::atomic<SizeClassPage*> reclaim{nullptr};  // claimed pages handed back by others
    // Segments filed by their longest run of free slots (slot 0 left out), so newPage
    // finds one that fits, the tightest first, by looking at no more than Slots heads.
    Segment* byRun[Slots + 1] = {};
    std::size_t dirtySlots = 0;
    std::size_t usedSlots = 0;
    std::uint64_t purgeDue = kNever;  // no segment's dirty memory is due before this (ms)
    SpinLock lock;  // slow paths, orphaning, trim and fork
    LocalHeap* nextAll = nullptr;
    LocalHeap* nextOrphan = nullptr;
    bool orphaned = false;
  };
  static constexpr std::size_t kHeapBytes = detail::align_up(sizeof(LocalHeap), 4096);

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

  static std::uintptr_t addr(const void* p) noexcept { return reinterpret_cast<std::uintptr_t>(p); }

  static void orphanThunk(void* instance, void* heap) noexcept {
    static_cast<OwnerThreadHeap*>(instance)->orphan(static_cast<LocalHeap*>(heap));
  }

  SizeClassPage* pageOf(void* p) const noexcept {
    auto* seg = static_cast<Segment*>(Super::chunkOf(p));
    return &seg->pages[seg->spanOf[(addr(p) - addr(seg)) >> SlotShift]];
  }

  // ---- Binding threads to heaps.

  LocalHeap* localHeap() noexcept {
    if (detail::ownerBinding.instance == id_) [[likely]]
      return static_cast<LocalHeap*>(detail::ownerBinding.heap);
    return bind();
  }

  // First malloc of a thread (or after it used another instance): adopt an orphan or make
  // a heap. The binding is stored before pthread_setspecific, which may itself allocate.
  // Returns nullptr (use the shared heap) for a thread whose exit destructor ran.
  LocalHeap* bind() noexcept {
    if (detail::ownerBinding.exited) return nullptr;
    auto& reg = detail::ownerRegistry;
    if (detail::ownerBinding.instance != 0) {
      reg.lock.lock();
      reg.orphanLocked();
      reg.lock.unlock();
    }
    poolLock_.lock();
    LocalHeap* h = orphans_;
    if (h != nullptr) {
      orphans_ = h->nextOrphan;
      h->orphaned = false;
      h->nextOrphan = nullptr;
    }
    poolLock_.unlock();
    if (h == nullptr) h = makeHeap();
    if (h == nullptr) return nullptr;
    detail::ownerBinding.heap = h;
    detail::ownerBinding.instance = id_;
    if (reg.keyMade) ::pthread_setspecific(reg.key, this);
    return h;
  }

  // A new LocalHeap from its own mapping, linked into the list of all heaps.
  LocalHeap* makeHeap() noexcept {
    void* m = ::mmap(nullptr, kHeapBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return nullptr;
    auto* h = new (m) LocalHeap();
    for (auto& c : h->current) c = &emptyPage_;
    poolLock_.lock();
    h->nextAll = all_;
    all_ = h;
    poolLock_.unlock();
    return h;
  }

  // Thread exit: release what the heap can, then make it an orphan.
  void orphan(LocalHeap* h) noexcept {
    if (h == nullptr) return;
    tidy(h);
    poolLock_.lock();
    if (!h->orphaned) {
      h->orphaned = true;
      h->nextOrphan = orphans_;
      orphans_ = h;
    }
    poolLock_.unlock();
  }

  void unlockAfterFork() noexcept {
    Super::unlockAll();
    hugeLock_.unlock();
    for (LocalHeap* h = all_; h != nullptr; h = h->nextAll) h->lock.unlock();
    poolLock_.unlock();
    detail::ownerRegistry.lock.unlock();
  }

  // ---- Queues (owner only).

  static void pushBack(Queue& q, SizeClassPage* p) noexcept {
    p->next = nullptr;
    p->prev = q.last;
    if (q.last) q.last->next = p; else q.first = p;
    q.last = p;
  }
  static void pushFront(Queue& q, SizeClassPage* p) noexcept {
    p->prev = nullptr;
    p->next = q.first;
    if (q.first) q.first->prev = p; else q.last = p;
    q.first = p;
  }
  static void unlink(Queue& q, SizeClassPage* p) noexcept {
    if (p->prev) p->prev->next = p->next; else q.first = p->next;
    if (p->next) p->next->prev = p->prev; else q.last = p->prev;
    p->next = p->prev = nullptr;
  }

  // ---- malloc slow paths.

  void* mallocSlow(LocalHeap* h, unsigned c) noexcept {
    h->lock.lock();
    void* b = refill(h, c);
    h->lock.unlock();
    return b;
  }

  // Threads past their exit destructor share one heap behind its lock.
  void* mallocShared(unsigned c) noexcept {
    LocalHeap* h = shared_;
    if (h == nullptr) {
      errno = ENOMEM;
      return nullptr;
    }
    h->lock.lock();
    void* b = h->current[c]->pop();
    if (b == nullptr) b = refill(h, c);
    h->lock.unlock();
    return b;
  }

  // The class's current page is dry: take back claimed pages, then walk the class queue
  // collecting thread-free lists (parking pages that are full), and reuse freed blocks
  // before carving new ones (so the resident size follows the live size); else start a
  // new page.
  void* refill(LocalHeap* h, unsigned c) noexcept {
    drainReclaim(h);
    maybePurge(h);
    Queue& q = h->queue[c];
    SizeClassPage* carvable = nullptr;
    for (SizeClassPage* page = q.first; page != nullptr;) {
      page->collect();
      if (page->free != nullptr) {
        h->current[c] = page;
        return page->pop();
      }
      if (page->capacity < page->reserved) {
        if (carvable == nullptr) carvable = page;
        page = page->next;
        continue;
      }
      if (!page->tryPark()) continue;  // a block just arrived: collect it
      SizeClassPage* next = page->next;
      if (h->current[c] == page) h->current[c] = &emptyPage_;
      unlink(q, page);
      pushBack(h->full, page);
      page->inFullList = true;
      page = next;
    }
    if (carvable != nullptr) {
      extend(carvable);
      h->current[c] = carvable;
      return carvable->pop();
    }
    h->current[c] = &emptyPage_;
    SizeClassPage* page = newPage(h, c);
    if (page == nullptr) {
      errno = ENOMEM;
      return nullptr;
    }
    pushFront(q, page);
    h->current[c] = page;
    extend(page);
    return page->pop();
  }

  // Carves more blocks and counts them as in use (stats()).
  void extend(SizeClassPage* page) noexcept {
    const std::uint32_t before = page->capacity;
    if (page->extend())
      inUse_.fetch_add(std::size_t{page->capacity - before} * page->blockSize,
                       std::memory_order_relaxed);
  }

  // Pages other threads claimed go back to their class queues (released if empty).
  void drainReclaim(LocalHeap* h) noexcept {
    SizeClassPage* page = h->reclaim.exchange(nullptr, std::memory_order_acquire);
    while (page != nullptr) {
      SizeClassPage* next = page->reclaimNext;
      page->unclaim();
      unlink(h->full, page);
      page->inFullList = false;
      pushBack(h->queue[page->sizeClass], page);
      page->collect();
      if (page->used == 0) retire(h, page, true);
      page = next;
    }
  }

  // ---- free slow paths.

  // The owner freed into a parked page (take it back) or emptied a page (retire it).
  void freeLocalSlow(LocalHeap* h, SizeClassPage* page) noexcept {
    h->lock.lock();
    if (page->inFullList && page->tryUnpark()) {
      unlink(h->full, page);
      page->inFullList = false;
      pushBack(h->queue[page->sizeClass], page);
    }
    if (page->used == 0 && !page->inFullList) retire(h, page, true);
    h->lock.unlock();
  }

  void freeRemote(Segment* seg, SizeClassPage* page, void* b) noexcept {
    if (!page->pushRemote(b)) [[likely]] return;
    LocalHeap* owner = seg->owner;
    SizeClassPage* head = owner->reclaim.load(std::memory_order_relaxed);
    do {
      page->reclaimNext = head;
    } while (!owner->reclaim.compare_exchange_weak(head, page, std::memory_order_release,
                                                   std::memory_order_relaxed));
  }

  // ---- Pages and segments (owner, under its heap lock).

  // An empty page leaves its queue and goes back to its segment, unless keepLast and it is
  // the only page of its class (so a class that churns around zero keeps one page).
  void retire(LocalHeap* h, SizeClassPage* page, bool keepLast) noexcept {
    Queue& q = h->queue[page->sizeClass];
    if (keepLast && page->sizeClass < ClassCount && q.first == page && q.last == page) return;
    if (h->current[page->sizeClass] == page) h->current[page->sizeClass] = &emptyPage_;
    unlink(q, page);
    releasePage(h, page);
  }

  void releasePage(LocalHeap* h, SizeClassPage* page) noexcept {
    Segment* seg = segmentOf(page);
    const std::size_t first = static_cast<std::size_t>(page - seg->pages);
    const std::uint64_t mask = spanMask(first, page->slots);
    inUse_.fetch_sub(std::size_t{page->capacity} * page->blockSize, std::memory_order_relaxed);
    page->inUse = false;
    for (std::size_t i = first; i < first + page->slots; ++i) seg->spanOf[i] = static_cast<std::uint8_t>(i);
    const std::uint64_t now = nowMs();
    if (seg->dirtySlots == 0 || (seg->freeSlots | mask) == kAllSlots) {
      seg->dirtyAt = now;
      if (now + PurgeDelayMs < h->purgeDue) h->purgeDue = now + PurgeDelayMs;
    }
    seg->freeSlots |= mask;
    seg->dirtySlots |= mask;
    h->dirtySlots += page->slots;
    h->usedSlots -= page->slots;
    fileSegment(h, seg);
    maybePurge(h, now);
  }

  // Milliseconds of CLOCK_MONOTONIC_COARSE: a vDSO read of the last tick, no system call.
  static std::uint64_t nowMs() noexcept {
    timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000 +
           static_cast<std::uint64_t>(ts.tv_nsec) / 1'000'000;
  }

  // Slow paths (refill, page release): when the heap holds more released memory than its
  // allowance, gives back the segments whose delay has passed, or everything beyond the
  // hard cap. Cost when within the allowance: one compare; else a clock read and a compare
  // until something is due, then one walk over the heap's segments.
  void maybePurge(LocalHeap* h, std::uint64_t now = 0) noexcept {
    if (h->dirtySlots <= MaxDirtySlots + h->usedSlots / 8) return;
    if (h->dirtySlots > kMaxDelayedSlots) {
      purge(h, MADV_FREE, kNever);
      return;
    }
    if (now == 0) now = nowMs();
    if (now >= h->purgeDue) purge(h, MADV_FREE, now);
  }

  static std::uint64_t spanMask(std::size_t first, std::size_t n) noexcept {
    return (n == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1) << first;
  }

  Segment* segmentOf(SizeClassPage* page) const noexcept {
    return static_cast<Segment*>(Super::chunkOf(page));
  }

  // Decommits the free, still-committed slots of the heap's segments whose delay has
  // passed at `now` (all of them for now == kNever); such segments with no page at all go
  // back to Super. Sets purgeDue to when the next segment's delay runs out.
  void purge(LocalHeap* h, int advice, std::uint64_t now) noexcept {
    std::uint64_t due = kNever;
    const auto expired = [&](const Segment* seg) {
      if (now == kNever || seg->dirtyAt + PurgeDelayMs <= now) return true;
      if (seg->dirtyAt + PurgeDelayMs < due) due = seg->dirtyAt + PurgeDelayMs;
      return false;
    };
    for (Segment* seg = h->byRun[Slots - 1]; seg != nullptr;) {
      Segment* next = seg->next;
      if (seg->freeSlots == kAllSlots && expired(seg)) releaseSegment(h, seg);
      seg = next;
    }
    for (Segment* first : h->byRun) for (Segment* seg = first; seg != nullptr; seg = seg->next) {
      if (seg->dirtySlots == 0 || !expired(seg)) continue;
      std::uint64_t d = seg->dirtySlots;
      while (d != 0) {
        const unsigned i = static_cast<unsigned>(std::countr_zero(d));
        const unsigned n = static_cast<unsigned>(std::countr_one(d >> i));
        std::byte* from = reinterpret_cast<std::byte*>(seg) + i * SlotSize;
        std::byte* to = from + std::size_t{n} * SlotSize;
        if (i == 0) from += kSegmentHeader;
        ::madvise(from, static_cast<std::size_t>(to - from), advice);
        d &= ~spanMask(i, n);
        uncommit(std::size_t{n} * SlotSize);
      }
      h->dirtySlots -= static_cast<std::size_t>(std::popcount(seg->dirtySlots));
      seg->dirtySlots = 0;
    }
    h->purgeDue = due;
  }

  void releaseSegment(LocalHeap* h, Segment* seg) noexcept {
    unlinkSegment(h, seg);
    const std::size_t dirty = static_cast<std::size_t>(std::popcount(seg->dirtySlots));
    h->dirtySlots -= dirty;
    uncommit(kSegmentHeader + dirty * SlotSize);
    seg->kind = 0;
    Super::free(seg);
  }

  // The first run of n free slots of a segment from slot `from` on, or -1. Cost: log2(n)
  // shift-and-ands (bit i of m survives when slots i..i+n-1 are all free) and a ctz.
  static int findRun(std::uint64_t freeSlots, std::size_t n, std::size_t from) noexcept {
    std::uint64_t m = freeSlots;
    for (std::size_t have = 1; have < n && m != 0;) {
      const std::size_t step = have < n - have ? have : n - have;
      m &= m >> step;
      have += step;
    }
    m &= ~std::uint64_t{0} << from;
    return m == 0 ? -1 : std::countr_zero(m);
  }

  // Longest run of set bits: each shift-and-and shortens every run by one.
  static std::size_t longestRun(std::uint64_t m) noexcept {
    std::size_t n = 0;
    for (; m != 0; ++n) m &= m >> 1;
    return n;
  }

  // Refiles a segment under its longest free run after its slots changed.
  static void fileSegment(LocalHeap* h, Segment* seg) noexcept {
    const std::size_t run = longestRun(seg->freeSlots & ~std::uint64_t{1});
    if (run == seg->maxRun) return;
    unlinkSegment(h, seg);
    seg->maxRun = run;
    linkSegment(h, seg);
  }

  static void linkSegment(LocalHeap* h, Segment* seg) noexcept {
    const std::size_t run = seg->maxRun;
    seg->prev = nullptr;
    seg->next = h->byRun[run];
    if (seg->next) seg->next->prev = seg;
    h->byRun[run] = seg;
  }

  static void unlinkSegment(LocalHeap* h, Segment* seg) noexcept {
    if (seg->prev) seg->prev->next = seg->next;
    else if (h->byRun[seg->maxRun] == seg) h->byRun[seg->maxRun] = seg->next;
    if (seg->next) seg->next->prev = seg->prev;
    seg->next = seg->prev = nullptr;
  }

  SizeClassPage* newPage(LocalHeap* h, unsigned c) noexcept {
    const std::size_t n = slotsFor(c);
    const std::size_t from = c >= ClassCount ? 1 : 0;  // large blocks are whole slots
    // The segment with the shortest longest-run that fits (best fit); in it, slots released
    // but still committed first (reusing them costs no page faults).
    Segment* seg = nullptr;
    for (std::size_t run = n; run <= Slots && seg == nullptr; ++run) seg = h->byRun[run];
    int first = -1;
    if (seg != nullptr) {
      first = findRun(seg->dirtySlots, n, from);
      if (first < 0) first = findRun(seg->freeSlots, n, from);
      if (first < 0) seg = nullptr;  // cannot happen: maxRun >= n from slot 1 on
    }
    if (seg == nullptr) {
      seg = newSegment(h);
      if (seg == nullptr) return nullptr;
      first = static_cast<int>(from);
    }
    const auto i = static_cast<std::size_t>(first);
    const std::uint64_t mask = spanMask(i, n);
    const std::size_t wasDirty = static_cast<std::size_t>(std::popcount(seg->dirtySlots & mask));
    h->dirtySlots -= wasDirty;
    commit((n - wasDirty) * SlotSize);
    seg->freeSlots &= ~mask;
    seg->dirtySlots &= ~mask;
    fileSegment(h, seg);
    for (std::size_t k = i; k < i + n; ++k) seg->spanOf[k] = static_cast<std::uint8_t>(i);
    SizeClassPage* page = &seg->pages[i];
    std::byte* area = reinterpret_cast<std::byte*>(seg) + i * SlotSize;
    std::size_t bytes = n * SlotSize;
    if (i == 0) {
      area += kSegmentHeader;
      bytes -= kSegmentHeader;
    }
    const auto size = static_cast<std::uint32_t>(classSize(c));
    page->init(area, bytes, size, static_cast<std::uint16_t>(c));
    page->slots = static_cast<std::uint8_t>(n);
    h->usedSlots += n;
    return page;
  }

  Segment* newSegment(LocalHeap* h) noexcept {
    void* chunk = Super::malloc(SegmentSize);
    if (chunk == nullptr) return nullptr;
    std::size_t keep[Super::HeaderBytes / sizeof(std::size_t)];
    __builtin_memcpy(keep, chunk, sizeof keep);
    auto* seg = new (chunk) Segment();
    __builtin_memcpy(seg->superHeader, keep, sizeof keep);
    seg->kind = kSegmentKind;
    seg->owner = h;
    seg->prev = seg->next = nullptr;
    seg->freeSlots = kAllSlots;
    seg->dirtySlots = 0;
    seg->dirtyAt = 0;
    seg->maxRun = Slots - 1;
    linkSegment(h, seg);
    for (std::size_t i = 0; i < Slots; ++i) seg->spanOf[i] = static_cast<std::uint8_t>(i);
    commit(kSegmentHeader);
    return seg;
  }

  // Collects every page, releases the empty ones and decommits: thread exit and trim.
  void tidy(LocalHeap* h) noexcept {
    if (h == nullptr) return;
    h->lock.lock();
    drainReclaim(h);
    for (unsigned c = 0; c < AllClasses; ++c) {
      for (SizeClassPage* page = h->queue[c].first; page != nullptr;) {
        SizeClassPage* next = page->next;
        page->collect();
        if (page->used == 0) retire(h, page, false);
        page = next;
      }
    }
    purge(h, MADV_DONTNEED, kNever);
    h->lock.unlock();
  }

  // ---- Huge objects.

  // A chunk of its own; a freed chunk of about the right length is reused from a small
  // cache (HugeCacheChunks chunks of at most a quarter of HugeCacheBytes, HugeCacheBytes in
  // all, kept committed, as glibc keeps blocks below its mmap threshold) before mapping.
  void* mallocHuge(std::size_t n, std::size_t align) noexcept {
    std::size_t offset = align < SegmentSize ? detail::align_up(kHugeHeader, align) : SegmentSize;
    std::size_t total;
    if (!detail::checked_add(n, offset, total)) {
      errno = ENOMEM;
      return nullptr;
    }
    void* chunk = align < SegmentSize ? takeCachedHuge(total) : nullptr;
    if (chunk == nullptr) {
      chunk = align < SegmentSize ? Super::mallocAligned(total, SegmentSize, 0)
                                  : Super::mallocAligned(total, align, SegmentSize);
      if (chunk == nullptr) return nullptr;
      commit(Super::getSize(chunk));
    }
    auto* h = static_cast<HugeHeader*>(chunk);
    h->kind = kHugeKind;
    h->objectOffset = offset;
    inUse_.fetch_add(Super::getSize(chunk) - offset, std::memory_order_relaxed);
    return static_cast<std::byte*>(chunk) + offset;
  }

  void freeHuge(void* chunk, void* p) noexcept {
    auto* h = static_cast<HugeHeader*>(chunk);
    if (h->kind != kHugeKind || addr(p) != addr(chunk) + h->objectOffset) return;
    const std::size_t len = Super::getSize(chunk);
    inUse_.fetch_sub(len - h->objectOffset, std::memory_order_relaxed);
    h->kind = 0;  // from here on free(p) and getSize(p) ignore it
    hugeLock_.lock();
    const bool keep = hugeCount_ < HugeCacheChunks && len <= HugeCacheBytes / 4 &&
                      hugeBytes_ + len <= HugeCacheBytes;
    if (keep) {
      hugeCache_[hugeCount_++] = chunk;
      hugeBytes_ += len;
    }
    hugeLock_.unlock();
    if (keep) return;
    uncommit(len);
    Super::free(chunk);
  }

  // The cached chunk that fits `total` bytes most tightly, if one is at most twice as long.
  void* takeCachedHuge(std::size_t total) noexcept {
    hugeLock_.lock();
    std::size_t best = HugeCacheChunks;
    for (std::size_t i = 0; i < hugeCount_; ++i) {
      const std::size_t len = Super::getSize(hugeCache_[i]);
      if (len >= total && len - total <= total &&
          (best == HugeCacheChunks || len < Super::getSize(hugeCache_[best])))
        best = i;
    }
    void* chunk = nullptr;
    if (best != HugeCacheChunks) {
      chunk = hugeCache_[best];
      hugeCache_[best] = hugeCache_[--hugeCount_];
      hugeBytes_ -= Super::getSize(chunk);
    }
    hugeLock_.unlock();
    return chunk;
  }

  // Unmaps the cached huge chunks; returns how many bytes went back.
  std::size_t dropHugeCache() noexcept {
    hugeLock_.lock();
    void* drop[HugeCacheChunks];
    const std::size_t n = hugeCount_;
    for (std::size_t i = 0; i < n; ++i) drop[i] = hugeCache_[i];
    hugeCount_ = 0;
    hugeBytes_ = 0;
    hugeLock_.unlock();
    std::size_t bytes = 0;
    for (std::size_t i = 0; i < n; ++i) {
      bytes += Super::getSize(drop[i]);
      uncommit(Super::getSize(drop[i]));
      Super::free(drop[i]);
    }
    return bytes;
  }

  // ---- Accounting.

  void commit(std::size_t n) noexcept {
    const std::size_t now = committed_.fetch_add(n, std::memory_order_relaxed) + n;
    std::size_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
  }
  void uncommit(std::size_t n) noexcept { committed_.fetch_sub(n, std::memory_order_relaxed); }

  static inline constinit SizeClassPage emptyPage_{};

  std::uint64_t id_ = 0;
  LocalHeap* shared_ = nullptr;
  SpinLock poolLock_;
  LocalHeap* all_ = nullptr;
  LocalHeap* orphans_ = nullptr;
  std::atomic<std::size_t> committed_{0};
  std::atomic<std::size_t> peak_{0};
  std::atomic<std::size_t> inUse_{0};
  SpinLock hugeLock_;
  std::size_t hugeCount_ = 0;
  std::size_t hugeBytes_ = 0;
  void* hugeCache_[HugeCacheChunks] = {};
};

}  // namespace strata
