// NestedHeap: heaps in a tree, like APR's subpools. createChild() makes a child heap that
// lives in its parent's memory; clearing the parent destroys its children first (newest
// first), and destroying it destroys them too, so a whole tree goes with its root. A child
// can also be destroyed on its own (destroyChild), which unlinks it from its parent.
// Cost: nothing on malloc/free; five pointers per heap; createChild is one parent malloc, or
// less: a destroyed child's storage is kept on its parent's list of spares and the next
// child of that parent is built in it (no parent malloc or free: a Reap parent would
// otherwise leave region mode, and build its free store, for its first destroyed child).
// The spares go with the parent's memory when it is cleared or destroyed. A child is
// default-initialised (its layers' member initialisers), not zero-filled.
#pragma once
#include <cstddef>
#include <new>
#include <utility>

#include "strata/concepts.hpp"
#include "strata/detail/poison.hpp"

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
    dropSpares();
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
    void* m;
    if (Spare* s = spare_) {
      spare_ = s->next;
      detail::unpoison(s, sizeof(NestedHeap));
      m = s;
    } else {
      m = Super::malloc(sizeof(NestedHeap));
      if (m == nullptr) return nullptr;
    }
    NestedHeap* c;
    if constexpr (sizeof...(A) == 0) {
      c = ::new (m) NestedHeap;  // default-initialised: no zero fill of the whole heap
    } else {
      c = ::new (m) NestedHeap(std::forward<A>(args)...);
    }
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

  // Destroys c, a child of this heap (and c's own children); its storage is kept for this
  // heap's next child.
  void destroyChild(NestedHeap* c) noexcept {
    c->~NestedHeap();
    auto* s = ::new (static_cast<void*>(c)) Spare{spare_};
    spare_ = s;
    detail::poison(reinterpret_cast<std::byte*>(s) + sizeof(Spare),
                   sizeof(NestedHeap) - sizeof(Spare));
  }

  // Destroys every child, then frees every object of this heap.
  void clear() noexcept {
    destroyChildren();
    dropSpares();
    Super::clear();
  }

  NestedHeap* parent() const noexcept { return parent_; }
  NestedHeap* firstChild() const noexcept { return firstChild_; }
  NestedHeap* nextSibling() const noexcept { return nextSibling_; }

 private:
  struct Spare {
    Spare* next;
  };

  void destroyChildren() noexcept {
    while (firstChild_ != nullptr) destroyChild(firstChild_);
  }

  // Forgets the spares (their memory goes with this heap's own, on clear or destruction),
  // unpoisoned for whoever gets that memory next.
  void dropSpares() noexcept {
    while (Spare* s = spare_) {
      spare_ = s->next;
      detail::unpoison(s, sizeof(NestedHeap));
    }
  }

  NestedHeap* parent_ = nullptr;
  NestedHeap* firstChild_ = nullptr;
  NestedHeap* nextSibling_ = nullptr;
  NestedHeap* prevSibling_ = nullptr;
  Spare* spare_ = nullptr;  // storage of destroyed children, for the next ones
};

}  // namespace strata
