// SLList: a LIFO dictionary of free objects, one link threaded through each object. The
// cheapest dictionary there is, for stores that never need to take out a particular object.
// Used as a heap through AdaptHeap (strata/building/adapt_heap.hpp).
#pragma once
#include <cstddef>

namespace strata {

// A stack of free objects: insert is two stores, get a compare, two loads and a store.
// Each object must hold one pointer (8-aligned).
class SLList {
 public:
  static constexpr std::size_t MinObjectSize = sizeof(void*);

  SLList() = default;
  SLList(const SLList&) = delete;
  SLList& operator=(const SLList&) = delete;

  // True when the list holds no object.
  bool empty() const noexcept { return head_ == nullptr; }

  // Pushes the free object p.
  void insert(void* p) noexcept {
    Node* node = static_cast<Node*>(p);
    node->next = head_;
    head_ = node;
  }

  // Pops the most recently inserted object, or returns nullptr when the list is empty.
  void* get() noexcept {
    Node* node = head_;
    if (node != nullptr) head_ = node->next;
    return node;
  }

  // Forgets every object (they are not touched).
  void clear() noexcept { head_ = nullptr; }

 private:
  struct Node {
    Node* next;
  };

  Node* head_ = nullptr;
};

}  // namespace strata
