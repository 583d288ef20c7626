// AdaptHeap: turns a dictionary of free objects (DLList, SLList, ...) into a heap. malloc
// takes an object out of the dictionary, or asks the parent when it is empty; free puts the
// object into the dictionary. Like FreelistHeap it ignores sizes: a store for objects of one
// size, or a bin whose owner (SegHeap) sorts objects by size before they arrive.
#pragma once
#include <concepts>
#include <cstddef>

#include "strata/building/dllist.hpp"
#include "strata/building/sllist.hpp"
#include "strata/concepts.hpp"

namespace strata {

// Fast path: the dictionary's get or insert (a handful of loads and stores) and one test.
// remove(p) and empty() exist exactly when the dictionary has them. The destructor gives
// every stored object back to the parent.
template <FreeDictionary Dict, Heap Super>
class AdaptHeap : public Super {
  static_assert(Super::Alignment >= alignof(void*),
                "AdaptHeap: objects must be aligned for the dictionary's links");

 public:
  static constexpr std::size_t Alignment = Super::Alignment;
  static constexpr std::size_t MinObjectSize = Dict::MinObjectSize;

  using Super::Super;
  AdaptHeap() = default;
  AdaptHeap(const AdaptHeap&) = delete;
  AdaptHeap& operator=(const AdaptHeap&) = delete;
  ~AdaptHeap() { release(); }

  // A stored object if there is one, else a new one from the parent (big enough for the links).
  void* malloc(std::size_t n) noexcept {
    if (void* p = dict_.get()) return p;
    return Super::malloc(n < MinObjectSize ? MinObjectSize : n);
  }

  // Stores p for reuse.
  void free(void* p) noexcept {
    if (p != nullptr) dict_.insert(p);
  }

  // Takes the stored object p out of the dictionary (it is not freed).
  void remove(void* p) noexcept
    requires requires(Dict& d, void* q) { d.remove(q); }
  {
    dict_.remove(p);
  }

  // True when no object is stored.
  bool empty() const noexcept
    requires requires(const Dict& d) { { d.empty() } -> std::same_as<bool>; }
  {
    return dict_.empty();
  }

  // Gives every stored object back to the parent.
  void release() noexcept {
    while (void* p = dict_.get()) Super::free(p);
  }

  // Frees everything at once: the stored objects are forgotten, the parent cleared.
  void clear() noexcept
    requires ClearableHeap<Super>
  {
    dict_.clear();
    Super::clear();
  }

 private:
  Dict dict_;
};

// The two stores named in the field's vocabulary; both fit SegHeap's LittleHeap parameter.
template <class Super>
using DLListHeap = AdaptHeap<DLList, Super>;
template <class Super>
using SLListHeap = AdaptHeap<SLList, Super>;

}  // namespace strata
