// EncodedLinks: a free block's link as a hardened page keeps it (the Links policy of
// SizeClassPageOf and QueuedPageOf): encoded under a process-wide random key, and checked
// every time it is read, as glibc's safe-linking and mimalloc's secure mode keep theirs.
//
// Where: 16 bytes into the block (its first 16 are a CheckedHeaderHeap's header above, so the
// link lies over the object's first bytes, where a write through a dangling pointer lands
// first); in a 16-byte block, its first word. How: the next block's address XOR the key XOR
// the block's own address, so the same link reads differently in every block and a copied
// one does not decode. Read: the decoded address must be null or a 16-aligned user-space
// address (below 2^47); anything else, such as a free block's first bytes written over after
// the free, is reported (reportHeapCorruption: FreeListLink at the link's address) when the
// page next pops, collects or walks that block, at the latest the next malloc of its class.
//
// The key is drawn once per process, by the first page made (prepare), and never changes,
// so every heap that uses this policy shares it. Not caught: a write that leaves the link
// as it was (it misses the link's 8 bytes, or writes what was there), a link forged by
// someone who read the key, and a write after free into memory no free list runs through
// (the medium tier's coalescing regions keep their own, plain metadata).
// Cost: a load of the key, two XORs, a mask and a branch per link read; two XORs per write.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "strata/hardening/corruption.hpp"
#include "strata/hardening/secret.hpp"

namespace strata {

namespace detail {
inline std::atomic<std::uint64_t> freeLinkKey{0};
}  // namespace detail

struct EncodedLinks {
  static constexpr std::size_t kOffset = 16;  // into a block of more than 16 bytes
  static constexpr std::size_t kBytes = kOffset + sizeof(void*);

  // Draws the key, once per process (before the first link is written).
  static void prepare() noexcept {
    if (detail::freeLinkKey.load(std::memory_order_acquire) != 0) return;
    std::uint64_t none = 0;
    detail::freeLinkKey.compare_exchange_strong(none, detail::freshSecret(), std::memory_order_acq_rel);
  }

  static void* next(const void* b, std::uint32_t blockSize) noexcept {
    const std::uint64_t* at = slot(b, blockSize);
    const std::uint64_t next = *at ^ mask(b);
    if ((next & kInvalidBits) != 0) [[unlikely]]
      reportHeapCorruption(HeapCorruption::FreeListLink, at);
    return reinterpret_cast<void*>(next);
  }

  static void setNext(void* b, void* next, std::uint32_t blockSize) noexcept {
    *slot(b, blockSize) = reinterpret_cast<std::uint64_t>(next) ^ mask(b);
  }

 private:
  // Set in no address a free block can hold: above user space, or below 16-byte alignment.
  static constexpr std::uint64_t kInvalidBits = ~((std::uint64_t{1} << 47) - 1) | 15;

  static std::uint64_t mask(const void* b) noexcept {
    return detail::freeLinkKey.load(std::memory_order_relaxed) ^ reinterpret_cast<std::uintptr_t>(b);
  }
  static std::uint64_t* slot(const void* b, std::uint32_t blockSize) noexcept {
    auto* at = static_cast<const std::byte*>(b) + (blockSize == 16 ? 0 : kOffset);
    return reinterpret_cast<std::uint64_t*>(const_cast<std::byte*>(at));
  }
};

}  // namespace strata
