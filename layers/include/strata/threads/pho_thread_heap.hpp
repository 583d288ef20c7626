// PHOThreadHeap: private heaps with ownership (Hoard's rule). Like ThreadHeap, each thread
// allocates from its own Super among NumHeaps, behind that heap's lock. Unlike ThreadHeap,
// each object remembers which heap made it, and free returns it to that heap, under that
// heap's lock, whichever thread frees it. Memory freed by a consumer thread is therefore
// reused by the producer that owns it, and what a program holds stays within a constant
// factor of what it uses (bounded blowup).
//
// The owner is kept in a 16-byte header just below the object: the first word holds the
// owner's index, the second is the shared header word of strata/detail/header.hpp (usable
// size, no flags), so routers above can still recognise the object and getSize() needs no
// help from Super. Cost over ThreadHeap: 16 bytes per object and two stores on malloc; a
// cross-thread free contends for the owner's lock.
//
// Accounting, when Super is an AccountedHeap: bytesHeld() is the exact sum over the heaps;
// peakBytesHeld() is the sum of the heaps' own peaks, an upper bound on the real peak (the
// heaps need not peak together); processAccount() is the exact figure.
#pragma once
#include <cerrno>
#include <concepts>
#include <cstddef>
#include <mutex>

#include "strata/concepts.hpp"
#include "strata/detail/align.hpp"
#include "strata/detail/header.hpp"
#include "strata/detail/spin_lock.hpp"
#include "strata/threads/thread_heap.hpp"

namespace strata {

template <std::size_t NumHeaps, Heap Super, BasicLockable Lock = SpinLock>
  requires std::default_initializable<Super>
class PHOThreadHeap : public detail::LockedSlots<NumHeaps, Lock, Super> {
  using Slots = detail::LockedSlots<NumHeaps, Lock, Super>;
  using typename Slots::Slot;
  using Slots::slots_;
  static_assert(NumHeaps >= 1, "PHOThreadHeap: needs at least one heap");
  static_assert(Super::Alignment >= alignof(std::size_t),
                "PHOThreadHeap: the parent must align objects for a size_t header");

 public:
  static constexpr std::size_t HeaderSize = 16;
  static constexpr std::size_t Alignment = Super::Alignment < 16 ? Super::Alignment : 16;
  static_assert(HeaderSize % Alignment == 0, "PHOThreadHeap: header would break alignment");

  PHOThreadHeap() = default;
  PHOThreadHeap(const PHOThreadHeap&) = delete;
  PHOThreadHeap& operator=(const PHOThreadHeap&) = delete;

  // The heap the calling thread allocates from.
  static std::size_t currentHeap() noexcept { return (detail::thread_number() - 1) % NumHeaps; }

  // The heap that made p (and will take it back).
  static std::size_t ownerOf(void* p) noexcept { return owner_word(p); }

  // Fast path: ThreadHeap's (TLS load, modulo, uncontended lock, the heap's malloc, unlock),
  // plus the size round-up with overflow checks and two header stores.
  void* malloc(std::size_t n) noexcept {
    std::size_t usable, total;
    if (!detail::checked_align_up(n, 16, usable) ||
        !detail::checked_add(usable, HeaderSize, total)) {
      errno = ENOMEM;
      return nullptr;
    }
    const std::size_t owner = currentHeap();
    void* block;
    {
      Slot& s = slots_[owner];
      std::lock_guard<Lock> guard(s.lock);
      block = s.heap.malloc(total);
    }
    if (block == nullptr) return nullptr;
    void* p = detail::bytes(block) + HeaderSize;
    owner_word(p) = owner;
    detail::header_word(p) = usable;
    return p;
  }

  // A header load, then the owner's lock and the owner's free.
  void free(void* p) noexcept {
    if (p == nullptr) return;
    Slot& s = slots_[owner_word(p)];
    std::lock_guard<Lock> guard(s.lock);
    s.heap.free(detail::bytes(p) - HeaderSize);
  }

  // The usable size recorded at malloc (the request rounded up to 16); one load, no lock.
  static std::size_t getSize(void* p) noexcept {
    return p ? detail::header_word(p) & ~detail::kFlagMask : 0;
  }

  // Clears every heap, with all locks held.
  void clear() noexcept
    requires ClearableHeap<Super>
  {
    this->lockAll();
    for (auto& s : slots_) s.heap.clear();
    this->unlockAll();
  }

 private:
  static std::size_t& owner_word(void* p) noexcept {
    return *(reinterpret_cast<std::size_t*>(p) - 2);
  }
};

}  // namespace strata
