// ForkSafeHeap: the simplest heap MallocShim can export. One SpinLock around a
// single-threaded heap (as LockedHeap), plus what a malloc replacement needs on top:
//  - pthread_atfork hooks (prepareFork takes the lock, so no other thread is inside the heap
//    when fork() copies it; the parent and the child release it afterwards);
//  - the usable bytes of live objects, counted under the lock, and stats() for mallinfo2;
//  - trim, memalign, reallocInPlace and reallocMoving, forwarded under the lock when Super
//    has them.
// The lock never allocates and never calls into libpthread, so the heap is usable before
// threads or TLS exist. Cost per call: an uncontended lock (one atomic exchange), a header
// load for the count, and the unlock (one release store). Every thread waits on the one
// lock: a per-thread composition (ThreadHeap, PHOThreadHeap) scales better.
#pragma once
#include <cstddef>
#include <mutex>

#include "strata/concepts.hpp"
#include "strata/detail/spin_lock.hpp"
#include "strata/shim/malloc_stats.hpp"
#include "strata/top/memory_account.hpp"

namespace strata {

template <SizedHeap Super>
class ForkSafeHeap : public Super {
 public:
  static constexpr std::size_t Alignment = Super::Alignment;

  using Super::Super;
  ForkSafeHeap() = default;
  ForkSafeHeap(const ForkSafeHeap&) = delete;
  ForkSafeHeap& operator=(const ForkSafeHeap&) = delete;

  // Super's malloc under the lock, counting the object's usable size.
  void* malloc(std::size_t n) noexcept {
    std::lock_guard<SpinLock> guard(lock_);
    void* p = Super::malloc(n);
    if (p != nullptr) inUse_ += Super::getSize(p);
    return p;
  }

  // Super's free under the lock; free(nullptr) does not touch the lock.
  void free(void* p) noexcept {
    if (p == nullptr) return;
    std::lock_guard<SpinLock> guard(lock_);
    inUse_ -= Super::getSize(p);
    Super::free(p);
  }

  // Locked too: a parent may keep sizes in structures that malloc and free change.
  std::size_t getSize(void* p) noexcept {
    std::lock_guard<SpinLock> guard(lock_);
    return Super::getSize(p);
  }

  // Super's aligned allocation, when it has one, under the lock and counted.
  void* memalign(std::size_t align, std::size_t n) noexcept
    requires requires(Super& s) { { s.memalign(align, n) } -> std::same_as<void*>; }
  {
    std::lock_guard<SpinLock> guard(lock_);
    void* p = Super::memalign(align, n);
    if (p != nullptr) inUse_ += Super::getSize(p);
    return p;
  }

  // Super's in-place resize, when it has one, under the lock; the count follows the size.
  void* reallocInPlace(void* p, std::size_t n) noexcept
    requires requires(Super& s) { { s.reallocInPlace(p, n) } -> std::same_as<void*>; }
  {
    std::lock_guard<SpinLock> guard(lock_);
    const std::size_t before = Super::getSize(p);
    if (Super::reallocInPlace(p, n) == nullptr) return nullptr;
    inUse_ = inUse_ - before + Super::getSize(p);
    return p;
  }

  // Super's page-moving resize, when it has one, under the lock; the count follows the size.
  void* reallocMoving(void* p, std::size_t n) noexcept
    requires requires(Super& s) { { s.reallocMoving(p, n) } -> std::same_as<void*>; }
  {
    std::lock_guard<SpinLock> guard(lock_);
    const std::size_t before = Super::getSize(p);
    void* q = Super::reallocMoving(p, n);
    if (q != nullptr) inUse_ = inUse_ - before + Super::getSize(q);
    return q;
  }

  // Super's trim, when it has one, under the lock.
  int trim(std::size_t pad) noexcept
    requires requires(Super& s) { { s.trim(pad) } -> std::same_as<int>; }
  {
    std::lock_guard<SpinLock> guard(lock_);
    return Super::trim(pad);
  }

  // Bytes from the system are the process account's: exact when this is the only Strata
  // heap in the process, as in a malloc library.
  MallocStats stats() noexcept {
    std::lock_guard<SpinLock> guard(lock_);
    return {processAccount().held(), inUse_, processAccount().peak()};
  }

  // Before fork(): no thread may be inside the heap while it is copied.
  void prepareFork() noexcept { lock_.lock(); }
  void parentAfterFork() noexcept { lock_.unlock(); }
  // The child has one thread, the one that forked and holds the lock.
  void childAfterFork() noexcept { lock_.unlock(); }

 private:
  SpinLock lock_;
  std::size_t inUse_ = 0;
};

}  // namespace strata
