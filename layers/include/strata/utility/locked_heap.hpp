// LockedHeap: makes any heap safe to share between threads by holding one lock around each
// call (code locking). Simple and correct, and the whole heap is serialised: use ThreadHeap
// or PHOThreadHeap when threads allocate heavily at the same time.
//
// The lock is a parameter. SpinLock (strata/detail/spin_lock.hpp) is the usual choice: a
// heap call holds the lock for a few dozen instructions, the uncontended cost is one atomic
// exchange that inlines into the caller (std::mutex costs a call into libpthread), it is one
// byte instead of forty, and it never allocates, so it also works inside a malloc
// replacement. std::mutex is better when the parent can block for long (an mmap per object,
// a heap over a slow device): waiters then sleep instead of yielding in a loop.
// C++ cannot default a leading template parameter, so the default is spelled
// LockedHeap<DefaultLock, Super> (or SpinLockedHeap<Super>).
#pragma once
#include <cstddef>
#include <mutex>

#include "strata/concepts.hpp"
#include "strata/detail/spin_lock.hpp"

namespace strata {

using DefaultLock = SpinLock;

template <BasicLockable Lock, Heap Super>
class LockedHeap : public Super {
 public:
  static constexpr std::size_t Alignment = Super::Alignment;

  using Super::Super;
  LockedHeap() = default;
  LockedHeap(const LockedHeap&) = delete;
  LockedHeap& operator=(const LockedHeap&) = delete;

  // Fast path: lock, the parent's malloc, unlock.
  void* malloc(std::size_t n) noexcept {
    std::lock_guard<Lock> guard(lock_);
    return Super::malloc(n);
  }

  // Same cost as malloc; free(nullptr) returns without touching the lock.
  void free(void* p) noexcept {
    if (p == nullptr) return;
    std::lock_guard<Lock> guard(lock_);
    Super::free(p);
  }

  // Locked too: a parent may keep sizes in structures that malloc and free change.
  std::size_t getSize(void* p) noexcept
    requires SizedHeap<Super>
  {
    std::lock_guard<Lock> guard(lock_);
    return Super::getSize(p);
  }

  // Frees everything at once; other threads wait for it to finish.
  void clear() noexcept
    requires ClearableHeap<Super>
  {
    std::lock_guard<Lock> guard(lock_);
    Super::clear();
  }

  // Holds the heap across an operation that must see it still, such as fork(): a malloc
  // replacement calls lock() in pthread_atfork's prepare handler and unlock() after.
  void lock() noexcept { lock_.lock(); }
  void unlock() noexcept { lock_.unlock(); }

 private:
  Lock lock_;
};

template <Heap Super>
using SpinLockedHeap = LockedHeap<SpinLock, Super>;

}  // namespace strata
