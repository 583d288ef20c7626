// What the hardening layers ask of their parents, beyond strata/concepts.hpp.
#pragma once
#include <concepts>
#include <cstddef>
#include <cstdint>

#include "strata/concepts.hpp"

namespace strata {

// A heap whose objects are 16-byte aligned: room for a 16-byte header keeps the object
// aligned (CheckedHeaderHeap).
template <class H>
concept SixteenAlignedHeap = Heap<H> && (H::Alignment >= 16);

// A sized heap whose getSize is exactly the size each object was asked for, not its block's
// (CheckedHeaderHeap records it), so a layer above knows where the object ends (CanaryHeap).
template <class H>
concept ExactSizedHeap = SizedHeap<H> && requires {
  { H::ExactSize } -> std::convertible_to<bool>;
} && H::ExactSize;

// An exact-sized heap that keeps a keyed secret for each live object (CheckedHeaderHeap's
// seal) and lends it to the layer above (objectSeal), which may derive its own check in the
// object from it rather than compute one (CanaryHeap).
template <class H>
concept SealingHeap = ExactSizedHeap<H> && requires(const H& h, const void* p) {
  { h.objectSeal(p) } -> std::same_as<std::uint64_t>;
};

// A heap that can say whether an address lies in memory it manages, without touching it
// (a map lookup): a check may then read a header below a pointer only when it is safe to.
template <class H>
concept OwningHeap = Heap<H> && requires(const H& h, const void* p) {
  { h.owns(p) } -> std::same_as<bool>;
};

// Optional members the hardening layers wrap when the parent has them.
template <class H>
concept ZeroingHeap = Heap<H> && requires(H& h, std::size_t n) {
  { h.mallocZeroed(n) } -> std::same_as<void*>;
};
// A zeroing heap that also says, for each zeroed block, whether it was left as the OS gave it
// (lazy: its later pages need not be resident) rather than cleared by writing every byte.
template <class H>
concept LazyZeroingHeap = ZeroingHeap<H> && requires(H& h, std::size_t n, bool& lazy) {
  { h.mallocZeroedLazy(n, lazy) } -> std::same_as<void*>;
};

// h's mallocZeroed, with lazy: h's word where it gives one (LazyZeroingHeap), else true.
template <ZeroingHeap H>
void* mallocZeroedSaying(H& h, std::size_t n, bool& lazy) noexcept {
  if constexpr (LazyZeroingHeap<H>) {
    return h.mallocZeroedLazy(n, lazy);
  } else {
    lazy = true;
    return h.mallocZeroed(n);
  }
}

template <class H>
concept MovingHeap = Heap<H> && requires(H& h, void* p, std::size_t n) {
  { h.reallocMoving(p, n) } -> std::same_as<void*>;
};

}  // namespace strata
