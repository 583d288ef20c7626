// NestedHeap: heaps in a tree, like APR's subpools. createChild() makes a child heap that
// lives in its parent's memory; clearing the parent destroys its children first (newest
// first), and destroying it destroys them too, so a whole tree goes with its root. A child
// can also be destroyed on its own (destroyChild), which unlinks it from its parent.
// Cost: nothing on malloc/free; four pointers per heap; createChild is one parent malloc.
#pragma once
#include <cstddef>
#include <new>
#include <utility>

#include "strata/concepts.hpp"

namespace strata {

template <ClearableHeap Super>
class NestedHeap : public Super {
 public:
  static constexpr std::size_t Alignment = Super::Alignment;

  using Super::Super;
  NestedHeap() = default;
  NestedHeap(const NestedHeap&) = delete;
  NestedHeap& operator=(const NestedHeap&) = delete;
  // Children go first (they may refer to the parent's objects), then this heap leaves its
  // parent's list; the layers below then give back this heap's memory.
  ~NestedHeap() {
    destroyChildren();
    if (parent_ != nullptr) {
      if (prevSibling_ != nullptr) {
        prevSibling_->nextSibling_ = nextSibling_;
      } else {
        parent_->firstChild_ = nextSibling_;
      }
      if (nextSibling_ != nullptr) nextSibling_->prevSibling_ = prevSibling_;
    }
  }

  // A new child heap, stored in this heap's memory; nullptr when that malloc fails.
  template <class... A>
  NestedHeap* createChild(A&&... args) noexcept {
    static_assert(alignof(NestedHeap) <= Alignment);
    void* m = Super::malloc(sizeof(NestedHeap));
    if (m == nullptr) return nullptr;
    auto* c = ::new (m) NestedHeap(std::forward<A>(args)...);
    // A layer that shares state down the tree (the Reap's chunk cache) hooks in here.
    if constexpr (requires(Super& a, Super& b) { a.joinParent(b); }) {
      static_cast<Super&>(*c).joinParent(static_cast<Super&>(*this));
    }
    c->parent_ = this;
    c->nextSibling_ = firstChild_;
    if (firstChild_ != nullptr) firstChild_->prevSibling_ = c;
    firstChild_ = c;
    return c;
  }

  // Destroys c, a child of this heap (and c's own children), and frees its storage.
  void destroyChild(NestedHeap* c) noexcept {
    c->~NestedHeap();
    Super::free(c);
  }

  // Destroys every child, then frees every object of this heap.
  void clear() noexcept {
    destroyChildren();
    Super::clear();
  }

  NestedHeap* parent() const noexcept { return parent_; }
  NestedHeap* firstChild() const noexcept { return firstChild_; }
  NestedHeap* nextSibling() const noexcept { return nextSibling_; }

 private:
  void destroyChildren() noexcept {
    while (firstChild_ != nullptr) destroyChild(firstChild_);
  }

  NestedHeap* parent_ = nullptr;
  NestedHeap* firstChild_ = nullptr;
  NestedHeap* nextSibling_ = nullptr;
  NestedHeap* prevSibling_ = nullptr;
};

}  // namespace strata
