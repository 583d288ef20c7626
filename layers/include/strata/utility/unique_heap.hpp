// UniqueHeap: a handle to one process-wide instance of Super. Every UniqueHeap<Super, Tag>
// object, wherever it is made, allocates from and frees to the same Super, so objects can
// be handed between handles freely and a handle costs nothing to create or copy. It is what
// PerClassHeap and a default-constructed StlAllocator draw from. Tag gives a composition
// several independent instances (PerClassHeap<H, Node> and PerClassHeap<H, Edge>).
//
// The instance is built on first use, inside a function-local static: the compiler's guard
// makes that thread-safe, and after the first call the cost is one load and a predicted
// branch. It is built in static storage and never destroyed. The alternative, a destructor
// run at exit, would run in reverse order of construction, so any static object built
// before the heap's first use (a global container, another heap's cache, a thread still
// running during exit) could free into a destroyed heap. Leaving it alive costs nothing at
// exit: the system takes the process's memory back. The price is that the top heaps under it
// are still charged when the process ends (processAccount() does not return to zero).
// Super is not locked: share it between threads only with a locking Super (LockedHeap).
#pragma once
#include <concepts>
#include <cstddef>
#include <new>

#include "strata/concepts.hpp"

namespace strata {

template <Heap Super, class Tag = void>
class UniqueHeap {
 public:
  static constexpr std::size_t Alignment = Super::Alignment;

  // The shared instance: constructed on the first call from any thread, never destroyed.
  static Super& instance() noexcept
    requires std::default_initializable<Super>
  {
    alignas(Super) static std::byte storage[sizeof(Super)];
    static Super* const heap = ::new (static_cast<void*>(storage)) Super();
    return *heap;
  }

  // Each call forwards to the instance: the guard check, then the instance's own cost.
  void* malloc(std::size_t n) noexcept(noexcept(instance().malloc(n))) {
    return instance().malloc(n);
  }

  void free(void* p) noexcept { instance().free(p); }

  std::size_t getSize(void* p) noexcept
    requires SizedHeap<Super>
  {
    return instance().getSize(p);
  }

  void clear() noexcept
    requires ClearableHeap<Super>
  {
    instance().clear();
  }

  std::size_t bytesHeld() const noexcept
    requires AccountedHeap<Super>
  {
    return instance().bytesHeld();
  }

  std::size_t peakBytesHeld() const noexcept
    requires AccountedHeap<Super>
  {
    return instance().peakBytesHeld();
  }
};

}  // namespace strata
