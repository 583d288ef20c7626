// RegionHeap: a region over any heap. Every object it hands out is remembered on an intrusive
// list (a 16-byte header: the next object and the object's size), so clear() gives them all
// back to the parent in one walk, and free of a single object does nothing: memory lives
// until the region is cleared or destroyed. The Reap uses it for its chunks (which it can
// then also search: find() answers "which chunk holds this address?"); over objects of
// their own it is the classic region, whose memory grows without bound when a program frees
// as it goes. Memory given back is unpoisoned first, since the parent may hand it out again.
// Fast path: the parent's malloc and two header stores. A parent with a sized free
// (free(p, n), n = what malloc was asked for) is given back its objects that way.
#pragma once
#include <cerrno>
#include <cstddef>

#include "strata/concepts.hpp"
#include "strata/detail/align.hpp"
#include "strata/detail/poison.hpp"

namespace strata {

template <Heap Super>
class RegionHeap : public Super {
  static_assert(Super::Alignment >= 16, "RegionHeap: the parent must align to 16");

 public:
  static constexpr std::size_t Alignment = 16;
  static constexpr std::size_t Overhead = 16;  // the header: next object, size

  using Super::Super;
  RegionHeap() = default;
  RegionHeap(const RegionHeap&) = delete;
  RegionHeap& operator=(const RegionHeap&) = delete;
  ~RegionHeap() { clear(); }

  // n bytes from the parent, remembered for clear. Overflow: nullptr with ENOMEM.
  void* malloc(std::size_t n) noexcept {
    std::size_t total;
    if (!detail::checked_align_up(n, 16, n) || !detail::checked_add(n, Overhead, total)) {
      errno = ENOMEM;
      return nullptr;
    }
    auto* h = static_cast<Node*>(Super::malloc(total));
    if (h == nullptr) return nullptr;
    h->next = head_;
    h->size = n;
    head_ = h;
    return h + 1;
  }

  // A region frees nothing on its own: p stays until clear().
  void free(void*) noexcept {}

  // The usable size (the request rounded up to 16).
  static std::size_t getSize(void* p) noexcept {
    return p ? (static_cast<Node*>(p) - 1)->size : 0;
  }

  // Gives every object back to the parent, newest first: one walk of the list.
  void clear() noexcept {
    while (Node* h = head_) {
      head_ = h->next;
      detail::unpoison(h + 1, h->size);
      if constexpr (requires(Super& s, void* q, std::size_t n) { s.free(q, n); }) {
        Super::free(h, h->size + Overhead);  // a sized free where the parent offers one
      } else {
        Super::free(h);
      }
    }
  }

  // The object that holds address p (start and size), false when none does. Cost: a walk
  // of the list, so meant for a few big objects (chunks), not for many small ones.
  bool find(const void* p, std::byte*& start, std::size_t& size) const noexcept {
    const auto* q = static_cast<const std::byte*>(p);
    for (Node* h = head_; h != nullptr; h = h->next) {
      auto* s = reinterpret_cast<std::byte*>(h + 1);
      if (q >= s && q < s + h->size) {
        start = s;
        size = h->size;
        return true;
      }
    }
    return false;
  }

  // True when the region holds no object.
  bool empty() const noexcept { return head_ == nullptr; }

 private:
  struct alignas(16) Node {
    Node* next;
    std::size_t size;
  };
  static_assert(sizeof(Node) == Overhead);

  Node* head_ = nullptr;
};

}  // namespace strata
