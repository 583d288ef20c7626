// The heap concepts. Every layer names what it needs of its parent with one of these, so a
// wrong composition stops at the layer that is wrong, with a one-line reason. The general
// ones come first, then the capabilities that single layers ask for.
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

// ---- Capabilities that particular layers ask of their parents and parameters.

// A heap whose successive mallocs are adjacent, like the program break: it reports where the
// next one will start. Such a heap is assumed to give memory back only all at once (free of
// a single object does nothing), which is what lets runs from it be joined (CoalesceableHeap).
template <class H>
concept ContiguousHeap = Heap<H> && requires(const H& h) {
  { h.top() } -> std::same_as<void*>;
};

// A sized heap that can be asked to serve a request from free memory only (ThresholdHeap).
template <class H>
concept BinnedHeap = SizedHeap<H> && requires(H& h, std::size_t n) {
  { h.mallocFromBins(n) } -> std::same_as<void*>;
};

// A sized heap that can resize an object where it is (reallocInPlace: p, or nullptr with p
// untouched).
template <class H>
concept ResizesInPlace = SizedHeap<H> && requires(H& h, void* p, std::size_t n) {
  { h.reallocInPlace(p, n) } -> std::same_as<void*>;
};

// A heap of mappings that can resize one where it is, or move its pages to grow it
// (MmapHeap::resizeMapping, moveMapping).
template <class H>
concept ResizableMappings = requires(H& h, void* p, std::size_t n) {
  { h.resizeMapping(p, n) } -> std::same_as<void*>;
  { h.moveMapping(p, n) } -> std::same_as<void*>;
};

// A sized heap that can recognise its own objects from their header (MmapHeap), so that
// SelectMmapHeap can route free and getSize by the object alone.
template <class H>
concept MappedHeap = SizedHeap<H> && requires(void* p) {
  { H::isMapped(p) } -> std::same_as<bool>;
};

// What CoalesceHeap needs of its parent: a sized heap of free blocks that can take out a
// particular free block (remove), and the boundary-tag helpers of CoalesceableHeap.
template <class S>
concept CoalescingStore = SizedHeap<S> && requires(S& s, void* p, std::size_t n) {
  { s.remove(p) } -> std::same_as<void>;
  { S::usableFor(n) } -> std::same_as<std::size_t>;
  { S::split(p, n) } -> std::same_as<void*>;
  { S::merge(p, p) } -> std::same_as<void>;
  { S::prev(p) } -> std::same_as<void*>;
  { S::next(p) } -> std::same_as<void*>;
  { S::isPrevFree(p) } -> std::same_as<bool>;
  { S::isNextFree(p) } -> std::same_as<bool>;
  { S::markFree(p) } -> std::same_as<void>;
  { S::markInUse(p) } -> std::same_as<void>;
};

// Heaps whose objects HybridHeap can tell apart by size: both read an object's size from
// the object alone (a static getSize), as combining/hybrid_heap.hpp explains.
template <class Small, class Big>
concept HybridCompatible = SizedHeap<Small> && SizedHeap<Big> && requires(void* p) {
  { Small::getSize(p) } -> std::same_as<std::size_t>;
  { Big::getSize(p) } -> std::same_as<std::size_t>;
};

// What AdaptHeap needs of a dictionary: insert a free object, get one back (nullptr when
// empty), forget all, and the least object size its links need.
template <class D>
concept FreeDictionary = std::default_initializable<D> && requires(D& d, void* p) {
  { d.insert(p) } -> std::same_as<void>;
  { d.get() } -> std::same_as<void*>;
  { d.clear() } -> std::same_as<void>;
  { D::MinObjectSize } -> std::convertible_to<std::size_t>;
};

// A size-class policy of the segregated heaps: size2class maps a request to the smallest
// class that holds it, class2size gives a class's object size.
template <class C>
concept SizeClasses = requires(std::size_t n, unsigned c) {
  { C::size2class(n) } -> std::convertible_to<unsigned>;
  { C::class2size(c) } -> std::convertible_to<std::size_t>;
};

// What a lock parameter must offer: std::mutex and SpinLock both qualify (BasicLockable).
template <class L>
concept BasicLockable = requires(L& l) {
  l.lock();
  l.unlock();
};

}  // namespace strata
