// PmrResource: a std::pmr::memory_resource over a Strata heap, so std::pmr containers and
// strings can draw from any composition.
//
// PmrResource<H> owns its heap (constructor arguments are forwarded to it); PmrResource<H&>
// refers to a heap that lives elsewhere and must outlive it. Alignment up to H::Alignment
// is the heap's own; a larger alignment over-allocates and keeps the heap's pointer in the
// word just below the aligned one, where deallocate finds it. Failure throws std::bad_alloc,
// as memory_resource requires. Two resources are equal only when they are the same object:
// memory from one must go back to the same heap.
#pragma once
#include <concepts>
#include <cstddef>
#include <memory_resource>
#include <new>
#include <type_traits>
#include <utility>

#include "strata/concepts.hpp"
#include "strata/detail/over_aligned.hpp"
#include "strata/detail/raise.hpp"

namespace strata {

template <class H>
  requires Heap<std::remove_reference_t<H>>
class PmrResource : public std::pmr::memory_resource {
 public:
  using heap_type = std::remove_reference_t<H>;

  // Builds the owned heap from args, or binds the referenced one.
  template <class... Args>
    requires std::constructible_from<H, Args...>
  explicit PmrResource(Args&&... args) : heap_(std::forward<Args>(args)...) {}
  PmrResource(const PmrResource&) = delete;
  PmrResource& operator=(const PmrResource&) = delete;

  // The heap underneath, for statistics and for objects made outside the resource.
  heap_type& heap() noexcept { return heap_; }

 protected:
  // Fast path (alignment within the heap's): a compare, the heap's malloc, a null check.
  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    if (bytes == 0) bytes = 1;
    void* p = alignment <= heap_type::Alignment
                  ? heap_.malloc(bytes)
                  : detail::malloc_over_aligned(heap_, bytes, alignment);
    if (p == nullptr) detail::raise<std::bad_alloc>();
    return p;
  }

  // Undoes do_allocate, which chose its path by the same alignment compare.
  void do_deallocate(void* p, std::size_t, std::size_t alignment) override {
    if (alignment <= heap_type::Alignment)
      heap_.free(p);
    else
      detail::free_over_aligned(heap_, p);
  }

  // Only the same resource may free another's memory.
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }

 private:
  H heap_;
};

}  // namespace strata
