// StlAllocator: lets standard containers allocate from a Strata heap.
//
//   KingsleyHeap<SbrkHeap<>> heap;
//   std::vector<int, StlAllocator<int, KingsleyHeap<SbrkHeap<>>>> v(heap);
//
// The allocator holds a pointer to a heap: one passed in (it must outlive the container),
// or, default-constructed, the process-wide UniqueHeap<H> instance. Allocators are equal
// when they use the same heap. Because memory must go back to the heap that made it, the
// allocator travels with the memory: copy and move assignment and swap propagate it, so a
// container's move assignment only swaps pointers. allocate throws std::bad_alloc when the
// heap fails and std::bad_array_new_length (a bad_alloc) when n * sizeof(T) overflows.
// A T whose alignment exceeds H::Alignment is refused at compile time, when a container
// first allocates (a static assertion in allocate, naming HeapAlignsFor). The check sits in
// allocate's body, not on the class or as allocate's constraint, so that a type can hold a
// container of itself (struct Node { std::vector<Node, StlAllocator<Node, H>> kids; }): a
// constraint may be checked while Node is still incomplete, and clang keeps that failure.
// Fast path: a multiply with overflow check, the heap's malloc, a null check.
#pragma once
#include <concepts>
#include <cstddef>
#include <new>
#include <type_traits>

#include "strata/concepts.hpp"
#include "strata/detail/align.hpp"
#include "strata/detail/raise.hpp"
#include "strata/utility/unique_heap.hpp"

namespace strata {

// H's objects are aligned well enough to hold a T.
template <class T, class H>
concept HeapAlignsFor = Heap<H> && (H::Alignment >= alignof(T));

template <class T, Heap H>
class StlAllocator {
 public:
  using value_type = T;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using propagate_on_container_copy_assignment = std::true_type;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  using is_always_equal = std::false_type;

  template <class U>
  struct rebind {
    using other = StlAllocator<U, H>;
  };

  // Uses the shared UniqueHeap<H> instance.
  StlAllocator() noexcept
    requires std::default_initializable<H>
      : heap_(&UniqueHeap<H>::instance()) {}

  // Uses heap, which must outlive every container and object made with this allocator.
  StlAllocator(H& heap) noexcept : heap_(&heap) {}

  template <class U>
  StlAllocator(const StlAllocator<U, H>& other) noexcept : heap_(&other.heap()) {}

  // n objects' worth of memory; zero objects still get a unique pointer (one byte).
  [[nodiscard]] T* allocate(std::size_t n) {
    static_assert(HeapAlignsFor<T, H>,
                  "StlAllocator: HeapAlignsFor<T, H>: the heap's Alignment is below alignof(T)");
    std::size_t bytes;
    if (!detail::checked_mul(n, sizeof(T), bytes)) detail::raise<std::bad_array_new_length>();
    void* p = heap_->malloc(bytes == 0 ? 1 : bytes);
    if (p == nullptr) detail::raise<std::bad_alloc>();
    return static_cast<T*>(p);
  }

  // Heaps free by pointer alone, so the count goes unused.
  void deallocate(T* p, std::size_t) noexcept { heap_->free(p); }

  // The heap this allocator draws from.
  H& heap() const noexcept { return *heap_; }

  // Equal allocators can free each other's memory: they share the heap.
  template <class U>
  bool operator==(const StlAllocator<U, H>& other) const noexcept {
    return heap_ == &other.heap();
  }

 private:
  H* heap_;
};

}  // namespace strata
