// The replayer's own memory: every table the replay engine keeps (object table, sizes, plan
// windows, decoder state) comes from pages it maps itself, not from the allocator under test
// (which LD_PRELOAD put behind malloc), so that the heap measured is the allocator's alone:
// heap = anonymous resident memory - ownResidentBytes() - a baseline (../../docs/replay.md).
#pragma once
#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

namespace strata::replay {

// Bytes from the replayer's own mappings. Large requests get a mapping each; small ones come
// from size classes carved out of mapped chunks. Thread-safe. Throws std::bad_alloc when the
// system has no memory left.
void* ownAllocate(std::size_t bytes);
void ownDeallocate(void* p, std::size_t bytes) noexcept;

// Resident bytes of every mapping the replayer made for itself (by mincore), so they can be
// taken out of the process's anonymous resident memory.
std::uint64_t ownResidentBytes() noexcept;

// How many mappings the replayer has made for itself so far: when it changed, its tables grew
// (and, for a moment, held the old copy beside the new one).
std::uint64_t ownMappingsMade() noexcept;

// A std allocator over ownAllocate, for the engine's containers.
template <class T>
struct OwnAllocator {
  using value_type = T;
  OwnAllocator() noexcept = default;
  template <class U>
  OwnAllocator(const OwnAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(ownAllocate(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { ownDeallocate(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const OwnAllocator<U>&) const noexcept { return true; }
};

template <class T>
using OwnVector = std::vector<T, OwnAllocator<T>>;

}  // namespace strata::replay
