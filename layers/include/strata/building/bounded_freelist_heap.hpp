// BoundedFreelistHeap: a FreelistHeap that caches at most MaxCount freed objects and gives
// the rest back to its parent, so a burst of frees cannot pin memory forever. Like
// FreelistHeap it is meant for objects of one size: it does not look at sizes.
// Fast path: malloc is a load, a load, a store and a decrement; free adds a compare and an
// increment to FreelistHeap's two stores.
#pragma once
#include <cstddef>

#include "strata/concepts.hpp"

namespace strata {

template <std::size_t MaxCount, Heap Super>
class BoundedFreelistHeap : public Super {
  static_assert(Super::Alignment >= alignof(void*),
                "BoundedFreelistHeap: objects must be aligned for a link pointer");

 public:
  static constexpr std::size_t Alignment = Super::Alignment;

  using Super::Super;
  BoundedFreelistHeap() = default;
  BoundedFreelistHeap(const BoundedFreelistHeap&) = delete;
  BoundedFreelistHeap& operator=(const BoundedFreelistHeap&) = delete;
  ~BoundedFreelistHeap() { release(); }

  // Reuses the most recently freed object, else asks the parent (for at least a link's
  // worth, so the object can later sit on the list).
  void* malloc(std::size_t n) noexcept {
    if (Node* p = head_) {
      head_ = p->next;
      --count_;
      return p;
    }
    return Super::malloc(n < sizeof(Node) ? sizeof(Node) : n);
  }

  // Keeps the object while fewer than MaxCount are cached, else gives it to the parent.
  void free(void* p) noexcept {
    if (p == nullptr) return;
    if (count_ == MaxCount) {
      Super::free(p);
      return;
    }
    Node* node = static_cast<Node*>(p);
    node->next = head_;
    head_ = node;
    ++count_;
  }

  // Gives every cached object back to the parent.
  void release() noexcept {
    while (Node* p = head_) {
      head_ = p->next;
      Super::free(p);
    }
    count_ = 0;
  }

  void clear() noexcept
    requires ClearableHeap<Super>
  {
    head_ = nullptr;
    count_ = 0;
    Super::clear();
  }

  // How many freed objects are cached now (never more than MaxCount).
  std::size_t cached() const noexcept { return count_; }

 private:
  struct Node {
    Node* next;
  };
  Node* head_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace strata
