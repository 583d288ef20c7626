// FreelistHeap: keeps freed objects on a singly linked list threaded through the objects and
// hands them out again before asking the parent. Meant for objects of one size (a bin of a
// segregated heap, a per-class heap): it does not look at sizes.
// Fast path: malloc is a load, a load and a store; free is two stores.
#pragma once
#include <cstddef>

#include "strata/concepts.hpp"

namespace strata {

template <Heap Super>
class FreelistHeap : public Super {
  static_assert(Super::Alignment >= alignof(void*),
                "FreelistHeap: objects must be aligned for a link pointer");

 public:
  static constexpr std::size_t Alignment = Super::Alignment;

  using Super::Super;
  FreelistHeap() = default;
  FreelistHeap(const FreelistHeap&) = delete;
  FreelistHeap& operator=(const FreelistHeap&) = delete;
  ~FreelistHeap() { release(); }

  void* malloc(std::size_t n) noexcept {
    if (Node* p = head_) {
      head_ = p->next;
      return p;
    }
    return Super::malloc(n < sizeof(Node) ? sizeof(Node) : n);
  }

  void free(void* p) noexcept {
    if (p == nullptr) return;
    Node* node = static_cast<Node*>(p);
    node->next = head_;
    head_ = node;
  }

  // Gives every cached object back to the parent.
  void release() noexcept {
    while (Node* p = head_) {
      head_ = p->next;
      Super::free(p);
    }
  }

  // Drops every cached object without touching it or the parent: for an owner that is about
  // to release the memory they live in by other means (a clear of the heap below).
  void forget() noexcept { head_ = nullptr; }

  void clear() noexcept
    requires ClearableHeap<Super>
  {
    head_ = nullptr;
    Super::clear();
  }

 private:
  struct Node {
    Node* next;
  };
  Node* head_ = nullptr;
};

}  // namespace strata
