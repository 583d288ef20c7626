// The heap concepts. Every layer names what it needs of its parent with one of these, so a
// wrong composition stops at the layer that is wrong, with a one-line reason.
#pragma once
#include <concepts>
#include <cstddef>

#include "strata/detail/align.hpp"

namespace strata {

// A heap hands out memory with malloc, takes it back with free, and promises an alignment.
// malloc returns nullptr when it cannot satisfy a request.
template <class H>
concept Heap = requires(H& h, std::size_t n, void* p) {
  { h.malloc(n) } -> std::same_as<void*>;
  { h.free(p) } -> std::same_as<void>;
  { H::Alignment } -> std::convertible_to<std::size_t>;
} && detail::is_pow2(H::Alignment);

// A heap that can tell the usable size of any object it handed out.
template <class H>
concept SizedHeap = Heap<H> && requires(H& h, void* p) {
  { h.getSize(p) } -> std::same_as<std::size_t>;
};

// A heap that can free every object at once and keep going.
template <class H>
concept ClearableHeap = Heap<H> && requires(H& h) {
  { h.clear() } -> std::same_as<void>;
};

// A heap that knows how much memory it holds from the system (now, and at most).
template <class H>
concept AccountedHeap = Heap<H> && requires(const H& h) {
  { h.bytesHeld() } -> std::same_as<std::size_t>;
  { h.peakBytesHeld() } -> std::same_as<std::size_t>;
};

// A heap whose alignment is at least that of the C library (max_align_t): what
// ANSIWrapper, the STL and pmr adapters promise their callers.
template <class H>
concept MaxAlignedHeap = Heap<H> && (H::Alignment >= alignof(std::max_align_t));

}  // namespace strata
