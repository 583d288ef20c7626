// ThreadBoundHeap: one Local heap (a PageQueues composition) per thread, over the process-wide
// source Super: binding threads to heaps (heap_registry.hpp), the pool of heaps and orphans
// (heap_pool.hpp), fork, and the sweep that purges heaps of threads that went quiet.
//
// Binding: a thread binds to a Local heap on its first malloc (an initial-exec TLS record:
// this instance's id and the heap; no constructor, so no __cxa_thread_atexit). A
// process-wide pthread key's destructor orphans the heap when the thread exits (after
// collecting it and giving its empty memory back); the next new thread adopts an orphan
// before making a new heap. After its exit destructor ran, a thread allocates from a shared
// heap behind a spin lock (and frees like a foreign thread), so late frees and mallocs in
// thread teardown work. Fork: prepareFork() takes every lock (registry, pool, each heap,
// Super's); in the child, heaps of the threads that no longer exist become orphans.
//
// Frees: the caller (HugeObjectHeap) has found the chunk; the page is found from the
// address; the owner pushes locally, any other thread with one CAS (PageQueues).
// Foreign pointers are ignored: addresses in a segment's header, in a slot no page holds,
// before a page's first block, and interior addresses of large blocks (unless memalign
// handed them out). Not detected: a double free or an interior pointer of a small block.
#pragma once
#include <pthread.h>

#include <atomic>
#include <cerrno>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>

#include "strata/detail/align.hpp"
#include "strata/detail/spin_lock.hpp"
#include "strata/platform/memory.hpp"
#include "strata/platform/page.hpp"
#include "strata/strata_heap/heap_pool.hpp"
#include "strata/strata_heap/heap_registry.hpp"
#include "strata/strata_heap/strata_tunables.hpp"

namespace strata {

// What ThreadBoundHeap needs of a per-thread heap built over Source: the page store's calls
// and the segment lookups.
template <class L, class Source>
concept ThreadLocalHeap = std::constructible_from<L, Source&> &&
    requires(L& l, unsigned c, bool& fresh, typename L::Page* page, void* p, std::size_t n,
             std::uint64_t t) {
  { L::classOf(n) } -> std::same_as<unsigned>;
  { l.pop(c) } -> std::same_as<void*>;
  { l.refill(c, fresh) } -> std::same_as<void*>;
  { L::pushLocal(page, p) } -> std::same_as<bool>;
  { L::usableFrom(page, p) } -> std::same_as<std::size_t>;
  l.freeLocalSlow(page);
  L::freeRemote(&l, page, p);
  l.tidy(platform::Decommit::Now);
  l.purgeIfDue(t);
  { L::segmentOf(p) } -> std::same_as<typename L::Segment*>;
  { L::MaxSize } -> std::convertible_to<std::size_t>;
};

// A per-thread heap with a tier of its own in front of the pages (MediumTier): its regions
// are marked as one-block pages (reserved == 1) that isTierPage tells apart; the owner frees
// into the tier's front caches (cacheFree), and the tier places its classes' aligned blocks.
template <class L>
concept TieredLocalHeap = requires(L& l, typename L::Page* page, unsigned c, std::size_t n, void* p) {
  { L::isTierPage(page) } -> std::same_as<bool>;
  { l.cacheFree(p) } -> std::same_as<bool>;
  { l.pendLocal(page, p) } -> std::same_as<bool>;
  L::freeRemoteTier(&l, page, p);
  { L::placesAligned(c) } -> std::same_as<bool>;
  { l.mallocAligned(n, n) } -> std::same_as<void*>;
};

// What ThreadBoundHeap needs of the process-wide source: records for per-thread heaps, the
// clock and tunables, the shared segment cache's purge, and its locks for fork.
template <class S>
concept BindingSource = requires(S& s, const S& cs, void* p, std::size_t n, std::uint64_t t) {
  { S::mapRecord(n) } -> std::same_as<void*>;
  S::unmapRecord(p, n);
  { S::nowMs() } -> std::same_as<std::uint64_t>;
  { cs.tunables() } -> std::same_as<const StrataTunables&>;
  { cs.cacheDue() } -> std::same_as<std::uint64_t>;
  s.purgeCache(t, true);
  s.lockAll();
  s.unlockAll();
};

template <class Local, class Super>
  requires BindingSource<Super> && ThreadLocalHeap<Local, Super>
class ThreadBoundHeap : public Super {
  struct Bound;

 public:
  using Page = typename Local::Page;
  using Segment = typename Local::Segment;
  static constexpr std::size_t Alignment = 16;
  static constexpr std::size_t MaxSize = Local::MaxSize;
  static constexpr std::size_t SlotSize = Local::SlotSize;
  static constexpr std::size_t MaxSmall = Local::MaxSmall;

  template <class... A>
  explicit ThreadBoundHeap(A&&... a) noexcept : Super(static_cast<A&&>(a)...) {
    id_ = detail::heapRegistry.add(this, &orphanThunk);
    shared_ = makeHeap();
  }
  ThreadBoundHeap(const ThreadBoundHeap&) = delete;
  ThreadBoundHeap& operator=(const ThreadBoundHeap&) = delete;

  // Forgets the registry entry and unmaps the heaps' records (Super unmaps the segments).
  ~ThreadBoundHeap() {
    detail::heapRegistry.remove(id_);
    for (Bound* h = pool_.first(); h != nullptr;) {
      Bound* next = h->nextAll;
      Super::unmapRecord(h, kBoundBytes);
      h = next;
    }
  }

  // Fast path (n <= MaxSize): TLS check, class computation, pop from the current page.
  void* malloc(std::size_t n) noexcept {
    const unsigned c = Local::classOf(n);
    if (Bound* h = localHeap()) [[likely]] {
      if (void* b = h->pop(c)) [[likely]] return b;
      return mallocSlow(h, c, nullptr);
    }
    return mallocShared(c, nullptr);
  }

  // n zeroed bytes (n <= MaxSize); a block carved from memory that reads as zero is not
  // cleared again. Fast path: malloc's, then the clearing (the slow path, which knows
  // whether the block is fresh, is a call of its own, so this one needs no stack frame).
  void* mallocZeroed(std::size_t n) noexcept {
    const unsigned c = Local::classOf(n);
    Bound* h = localHeap();
    if (h != nullptr) [[likely]] {
      if (void* b = h->pop(c)) [[likely]] return std::memset(b, 0, n);
    }
    return mallocZeroedSlow(h, c, n);
  }

  // mallocZeroed that also says whether the block was left as the OS gave it (lazy: only its
  // free-list link's bytes were cleared, so its later pages need not be resident) or was
  // cleared here (every byte written). A layer above may then write past the object's start
  // only where that costs no page (CanaryHeap).
  void* mallocZeroedLazy(std::size_t n, bool& lazy) noexcept {
    const unsigned c = Local::classOf(n);
    Bound* h = localHeap();
    lazy = false;
    if (h != nullptr) [[likely]] {
      if (void* b = h->pop(c)) [[likely]] return std::memset(b, 0, n);
    }
    return mallocZeroedSlow(h, c, n, &lazy);
  }

  // Whether a chunk of Super is one of this heap's segments.
  static bool ownsChunk(void* chunk) noexcept { return Local::segmentOf(chunk) != nullptr; }

  // Fast path: page lookup, then a local push (owner) or one CAS (any other thread).
  void freeIn(void* chunk, void* p) noexcept {
    auto* seg = static_cast<Segment*>(chunk);
    Page* page = Local::pageAt(seg, p);
    if (page == nullptr || static_cast<std::byte*>(p) < page->start) [[unlikely]] return;
    if (page->reserved == 1) [[unlikely]] {  // a large class's one block, or a tier's region
      if (isTierPage(page)) return freeTier(seg, page, p);
      if (p != page->start && !page->hasAligned) return;
    }
    void* b = page->blockOf(p);
    if (callerOwns(seg)) [[likely]] {
      if (Local::pushLocal(page, b)) [[unlikely]] freeLocalSlow(seg, page);
      return;
    }
    Local::freeRemote(boundOf(seg), page, b);
  }

  // Usable bytes from p to the end of its block; 0 for pointers freeIn ignores.
  static std::size_t getSizeIn(void* chunk, const void* p) noexcept {
    auto* seg = static_cast<Segment*>(chunk);
    const Page* page = Local::pageAt(seg, p);
    if (page == nullptr || static_cast<const std::byte*>(p) < page->start) return 0;
    if (page->reserved == 1 && p != page->start && !page->hasAligned && !isTierPage(page)) return 0;
    return Local::usableFrom(page, p);
  }

  // need (>= n + align - 16, at most MaxSize) bytes, handing out the block's first address
  // aligned to align; the page is marked so free and getSize find the block's start.
  void* mallocAlignedIn(std::size_t align, std::size_t need) noexcept {
    if constexpr (TieredLocalHeap<Local>) {
      if (Local::placesAligned(Local::classOf(need))) return mallocAlignedByLocal(align, need);
    }
    void* b = malloc(need);
    if (b == nullptr) return nullptr;
    void* q = reinterpret_cast<void*>(detail::align_up(reinterpret_cast<std::uintptr_t>(b), align));
    if (q != b) Local::pageAt(segmentHolding(b), b)->hasAligned = true;
    return q;
  }

  // Collects and empties the calling thread's heap, the orphans and the shared heap, and
  // gives the shared segment cache back. (Other running threads' heaps are theirs.)
  void trimHeaps() noexcept {
    if (detail::heapBinding.instance == id_) tidy(static_cast<Bound*>(ownerOf(detail::heapBinding.heap)));
    pool_.forEachOrphan([this](Bound* h) { tidy(h); });
    tidy(shared_);
    Super::purgeCache(Super::nowMs(), true);
  }

  // pthread_atfork handlers: every lock this heap takes, in its order.
  void prepareFork() noexcept {
    detail::heapRegistry.lock.lock();
    pool_.lockAll();
    Super::lockAll();
  }
  void parentAfterFork() noexcept { unlockAfterFork(); }
  // In the child only the forking thread exists: every other bound heap becomes an orphan.
  void childAfterFork() noexcept {
    Bound* mine = detail::heapBinding.instance == id_ ? static_cast<Bound*>(ownerOf(detail::heapBinding.heap)) : nullptr;
    pool_.orphanAllBut(mine, shared_);
    unlockAfterFork();
  }

 private:
  using Owner = std::remove_pointer_t<decltype(Segment::owner)>;

  struct Bound : Local {
    explicit Bound(Super& s) noexcept : Local(s) {}
    SpinLock lock;  // slow paths, orphaning, sweeps, trim and fork
    Bound* nextAll = nullptr;
    Bound* nextOrphan = nullptr;
    std::atomic<bool> orphaned{false};  // written under the pool's lock, read by sweeps under this one's
    unsigned refills = 0;
  };
  static constexpr std::size_t kBoundBytes = platform::pageAlignUp(sizeof(Bound));
  static constexpr unsigned kSweepEvery = 64;  // refills between looks at the clock
  static constexpr std::uint64_t kNever = ~std::uint64_t{0};

  static Bound* boundOf(Segment* seg) noexcept { return static_cast<Bound*>(seg->owner); }

  // Whether the calling thread is bound to this instance's heap that owns seg.
  bool callerOwns(const Segment* seg) const noexcept {
    return detail::heapBinding.instance == id_ && static_cast<void*>(seg->owner) == detail::heapBinding.heap;
  }

  static bool isTierPage(const Page* page) noexcept {
    if constexpr (TieredLocalHeap<Local>) return Local::isTierPage(page);
    else return false;
  }

  // A block of a tier's region: the owner keeps it in the tier's front cache while there is
  // room, else hands it to the region (a local push, the slow path every few); any other
  // thread pushes it onto the region's thread-free list.
  void freeTier(Segment* seg, Page* page, void* p) noexcept {
    if constexpr (TieredLocalHeap<Local>) {
      if (callerOwns(seg)) {
        Bound* h = boundOf(seg);
        if (h->cacheFree(p)) return;
        if (h->pendLocal(page, p)) freeLocalSlow(seg, page);
        return;
      }
      Local::freeRemoteTier(boundOf(seg), page, p);
    }
  }
  static Owner* ownerOf(void* heap) noexcept { return static_cast<Owner*>(heap); }
  static Segment* segmentHolding(void* b) noexcept {
    return reinterpret_cast<Segment*>(reinterpret_cast<std::uintptr_t>(b) & ~(Local::SegmentSize - 1));
  }

  static void orphanThunk(void* instance, void* heap) noexcept {
    static_cast<ThreadBoundHeap*>(instance)->orphan(static_cast<Bound*>(ownerOf(heap)));
  }

  Bound* localHeap() noexcept {
    if (detail::heapBinding.instance == id_) [[likely]]
      return static_cast<Bound*>(ownerOf(detail::heapBinding.heap));
    return bind();
  }

  // First malloc of a thread (or after it used another instance): adopt an orphan or make
  // a heap. nullptr (use the shared heap) for a thread whose exit destructor ran.
  Bound* bind() noexcept {
    if (detail::heapBinding.exited) return nullptr;
    detail::heapRegistry.unbind();
    Bound* h = pool_.adopt();
    if (h == nullptr) h = makeHeap();
    if (h == nullptr) return nullptr;
    detail::heapRegistry.bind(id_, static_cast<Owner*>(h), this);
    return h;
  }

  Bound* makeHeap() noexcept {
    void* m = Super::mapRecord(kBoundBytes);
    if (m == nullptr) return nullptr;
    auto* h = new (m) Bound(*this);
    pool_.add(h);
    return h;
  }

  // Thread exit: collect the heap and release its empty pages, then make it an orphan. Its
  // free memory stays for the next thread to adopt it (or goes by the purge policy).
  void orphan(Bound* h) noexcept {
    if (h == nullptr) return;
    tidy(h, platform::Decommit::Lazy);
    pool_.orphan(h);
  }

  void tidy(Bound* h, platform::Decommit how = platform::Decommit::Now) noexcept {
    if (h == nullptr) return;
    h->lock.lock();
    h->tidy(how);
    h->lock.unlock();
  }

  void unlockAfterFork() noexcept {
    Super::unlockAll();
    pool_.unlockAll();
    detail::heapRegistry.lock.unlock();
  }

  [[gnu::noinline]] void* mallocSlow(Bound* h, unsigned c, bool* zeroed) noexcept {
    if (Super::cacheDue() != kNever) {  // expired warm segments go before a refill takes one
      const std::uint64_t now = Super::nowMs();
      if (now >= Super::cacheDue()) Super::purgeCache(now);
    }
    bool fresh = false;
    h->lock.lock();
    void* b = h->refill(c, fresh);
    const bool sweep = ++h->refills % kSweepEvery == 0;
    h->lock.unlock();
    if (zeroed != nullptr) *zeroed = fresh;
    if (b == nullptr) errno = ENOMEM;
    if (sweep) sweepQuietHeaps();
    return b;
  }

  // mallocZeroed when the current page is dry or the thread has no heap of its own.
  // lazy, when given, is set when the block is fresh.
  [[gnu::noinline]] void* mallocZeroedSlow(Bound* h, unsigned c, std::size_t n, bool* lazy = nullptr) noexcept {
    bool fresh = false;
    void* b = h != nullptr ? mallocSlow(h, c, &fresh) : mallocShared(c, &fresh);
    if (b == nullptr) return nullptr;
    if (fresh) {  // only the free-list link was written, in the block's first Links::kBytes
      constexpr std::size_t kLink = Local::Page::Links::kBytes;
      std::memset(b, 0, n < kLink ? n : kLink);
      if (lazy != nullptr) *lazy = true;
      return b;
    }
    return std::memset(b, 0, n);
  }

  // A class whose blocks Local places at an alignment itself (a tier in front of the pages).
  [[gnu::noinline]] void* mallocAlignedByLocal(std::size_t align, std::size_t need) noexcept {
    Bound* h = localHeap();
    if (h == nullptr) h = shared_;
    void* b = nullptr;
    if (h != nullptr) {
      h->lock.lock();
      b = h->mallocAligned(align, need);
      h->lock.unlock();
    }
    if (b == nullptr) errno = ENOMEM;
    return b;
  }

  // Threads past their exit destructor share one heap behind its lock.
  [[gnu::noinline]] void* mallocShared(unsigned c, bool* zeroed) noexcept {
    Bound* h = shared_;
    if (h == nullptr) {
      errno = ENOMEM;
      return nullptr;
    }
    bool fresh = false;
    h->lock.lock();
    void* b = h->pop(c);
    if (b == nullptr) b = h->refill(c, fresh);
    h->lock.unlock();
    if (zeroed != nullptr) *zeroed = fresh;
    if (b == nullptr) errno = ENOMEM;
    return b;
  }

  [[gnu::noinline]] void freeLocalSlow(Segment* seg, Page* page) noexcept {
    Bound* h = boundOf(seg);
    h->lock.lock();
    h->freeLocalSlow(page);
    h->lock.unlock();
  }

  // Once per purge delay, any thread's slow path purges what is due in the heaps whose
  // lock is free (their owners are not in a slow path), and the shared segment cache. An
  // orphan still waiting to be adopted gives back all its free memory at once (Now: its
  // thread is gone, so nothing of it is warm for anyone).
  void sweepQuietHeaps() noexcept {
    const std::uint64_t now = Super::nowMs();
    std::uint64_t due = nextSweep_.load(std::memory_order_relaxed);
    if (now < due || !nextSweep_.compare_exchange_strong(due, now + Super::tunables().purgeDelayMs,
                                                         std::memory_order_relaxed))
      return;
    for (Bound* h = pool_.first(); h != nullptr; h = h->nextAll) {
      if (!h->lock.try_lock()) continue;
      if (h->orphaned) h->purgeAll(platform::Decommit::Now);
      else h->purgeIfDue(now);
      h->lock.unlock();
    }
    Super::purgeCache(now);
  }

  std::uint64_t id_ = 0;
  Bound* shared_ = nullptr;
  HeapPool<Bound> pool_;
  std::atomic<std::uint64_t> nextSweep_{0};
};

}  // namespace strata
