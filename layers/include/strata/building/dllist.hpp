// DLList: a FIFO dictionary of free objects, threaded through the objects themselves and
// doubly linked, so that any member can be taken out in O(1). That is what a coalescing heap
// needs: when a block is freed, its free neighbours must leave whatever bin they sit in.
// Used as a heap through AdaptHeap (strata/building/adapt_heap.hpp).
#pragma once
#include <cstddef>

namespace strata {

// A circular list around a sentinel node kept inside the DLList, so no operation tests for
// an empty or one-element list: insert is four stores, remove two loads and two stores, get
// one compare more. Each object must hold two pointers (16 bytes, 8-aligned). The sentinel
// makes a DLList immovable.
class DLList {
 public:
  static constexpr std::size_t MinObjectSize = 2 * sizeof(void*);

  DLList() noexcept { clear(); }
  DLList(const DLList&) = delete;
  DLList& operator=(const DLList&) = delete;

  // True when the list holds no object.
  bool empty() const noexcept { return head_.next == &head_; }

  // Appends the free object p at the tail (the newest end).
  void insert(void* p) noexcept {
    Node* node = static_cast<Node*>(p);
    Node* last = head_.prev;
    node->next = &head_;
    node->prev = last;
    last->next = node;
    head_.prev = node;
  }

  // Takes the oldest object, or returns nullptr when the list is empty.
  void* get() noexcept {
    Node* node = head_.next;
    if (node == &head_) return nullptr;
    unlink(node);
    return node;
  }

  // Unlinks p, which must be on this list, wherever it is.
  void remove(void* p) noexcept { unlink(static_cast<Node*>(p)); }

  // Forgets every object (they are not touched).
  void clear() noexcept { head_.next = head_.prev = &head_; }

 private:
  struct Node {
    Node* next;
    Node* prev;
  };

  static void unlink(Node* node) noexcept {
    node->prev->next = node->next;
    node->next->prev = node->prev;
  }

  Node head_;
};

}  // namespace strata
