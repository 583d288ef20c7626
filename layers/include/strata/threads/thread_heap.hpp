// ThreadHeap: a heap per thread, so threads rarely wait for each other.
//
// The layer holds NumHeaps instances of Super, each behind its own lock and on its own cache
// lines. A thread is numbered the first time it allocates (round robin, from one process-wide
// counter) and always uses heap number % NumHeaps; with at least as many heaps as threads,
// each lock is only ever taken by its own thread and costs an uncontended exchange.
//
// There is no ownership: free puts an object into the CURRENT thread's heap, whichever heap
// made it, so Super must accept objects made by its siblings. That is the cheapest possible
// free, but memory drifts: in a producer-consumer program the consumer's heap fills with
// objects the producer never sees again, and the producer keeps asking its parent for more
// (unbounded blowup). PHOThreadHeap fixes this at the cost of a 16-byte header per object.
// Holding the heaps (rather than inheriting one) is what the layer is, so there is no
// `using Super::Super`: the heaps are default-constructed.
//
// Accounting, when Super is an AccountedHeap: bytesHeld() is the sum over the heaps, exact.
// peakBytesHeld() is the sum of the heaps' own peaks, an upper bound on the real peak (the
// heaps need not peak at the same time); processAccount() is the exact figure. Over a top
// heap that returns memory on free (MallocHeap, MmapHeap) a cross-thread free refunds the
// wrong heap, so single heaps' accounts are skewed: the sum of bytesHeld() still cancels
// out, the sum of peaks then says little.
#pragma once
#include <atomic>
#include <concepts>
#include <cstddef>
#include <mutex>

#include "strata/concepts.hpp"
#include "strata/detail/spin_lock.hpp"

namespace strata {

namespace detail {

// This thread's number, 1, 2, 3, ... in the order threads first ask. The thread_local is
// constant-initialised, so reading it is a plain TLS load; the counter is touched once per
// thread.
inline std::size_t thread_number() noexcept {
  static constinit thread_local std::size_t number = 0;
  if (number == 0) {
    static constinit std::atomic<std::size_t> next{1};
    number = next.fetch_add(1, std::memory_order_relaxed);
  }
  return number;
}

// One heap of a thread layer with its lock, padded to whole cache lines so that two
// threads' locks never share a line.
template <class Lock, class Super>
struct alignas(kCacheLine) LockedSlot {
  Lock lock;
  Super heap;
};

// The NumHeaps locked heaps of a thread layer, with what both thread layers answer the same
// way: the sums of the heaps' accounts (no lock: the accounts are atomics kept by the top
// heaps; the peak is the sum of the heaps' own peaks, an upper bound) and all-locks-held
// lockAll/unlockAll, taken in index order so that two callers cannot deadlock.
template <std::size_t NumHeaps, class Lock, class Super>
class LockedSlots {
 public:
  std::size_t bytesHeld() const noexcept
    requires AccountedHeap<Super>
  {
    std::size_t sum = 0;
    for (const auto& s : slots_) sum += s.heap.bytesHeld();
    return sum;
  }

  std::size_t peakBytesHeld() const noexcept
    requires AccountedHeap<Super>
  {
    std::size_t sum = 0;
    for (const auto& s : slots_) sum += s.heap.peakBytesHeld();
    return sum;
  }

 protected:
  using Slot = LockedSlot<Lock, Super>;

  void lockAll() noexcept {
    for (auto& s : slots_) s.lock.lock();
  }
  void unlockAll() noexcept {
    for (auto& s : slots_) s.lock.unlock();
  }

  Slot slots_[NumHeaps];
};

// Calls release() (give cached objects back to the parent) where a heap has one.
template <class H>
void release_if_offered(H& heap) noexcept {
  if constexpr (requires { heap.release(); }) heap.release();
}

}  // namespace detail

template <std::size_t NumHeaps, Heap Super, BasicLockable Lock = SpinLock>
  requires std::default_initializable<Super>
class ThreadHeap : public detail::LockedSlots<NumHeaps, Lock, Super> {
  using Slots = detail::LockedSlots<NumHeaps, Lock, Super>;
  using typename Slots::Slot;
  using Slots::slots_;
  static_assert(NumHeaps >= 1, "ThreadHeap: needs at least one heap");

 public:
  static constexpr std::size_t Alignment = Super::Alignment;

  ThreadHeap() = default;
  ThreadHeap(const ThreadHeap&) = delete;
  ThreadHeap& operator=(const ThreadHeap&) = delete;

  // A heap's cache may hold objects from a sibling's memory, and the heaps are destroyed one
  // by one; so every cache is emptied first, while all the memory is still there.
  ~ThreadHeap() {
    for (auto& s : slots_) detail::release_if_offered(s.heap);
  }

  // The heap the calling thread uses.
  static std::size_t currentHeap() noexcept { return (detail::thread_number() - 1) % NumHeaps; }

  // Fast path: a TLS load, a modulo (a mask when NumHeaps is a power of two), an uncontended
  // lock, the heap's malloc, an unlock.
  void* malloc(std::size_t n) noexcept {
    Slot& s = slots_[currentHeap()];
    std::lock_guard<Lock> guard(s.lock);
    return s.heap.malloc(n);
  }

  // Same cost as malloc; the object joins the calling thread's heap.
  void free(void* p) noexcept {
    if (p == nullptr) return;
    Slot& s = slots_[currentHeap()];
    std::lock_guard<Lock> guard(s.lock);
    s.heap.free(p);
  }

  // Asks the calling thread's heap (any heap can size any object: there is no ownership).
  std::size_t getSize(void* p) noexcept
    requires SizedHeap<Super>
  {
    Slot& s = slots_[currentHeap()];
    std::lock_guard<Lock> guard(s.lock);
    return s.heap.getSize(p);
  }

  // Clears every heap with all locks held; every cache is emptied before any heap's memory
  // is reset.
  void clear() noexcept
    requires ClearableHeap<Super>
  {
    this->lockAll();
    for (auto& s : slots_) detail::release_if_offered(s.heap);
    for (auto& s : slots_) s.heap.clear();
    this->unlockAll();
  }
};

}  // namespace strata
