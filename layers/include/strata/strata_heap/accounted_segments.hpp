// AccountedSegments: the operating-system side of StrataHeap, over a segment heap. It gives
// the chunk calls names of their own (allocSegment, allocChunk, freeChunk, chunkOf) so the
// layers above keep malloc and free for objects, and it is where every system call of the
// composition goes (through strata/platform/): segments and huge chunks from Super, decommit,
// small mappings for per-thread records. It keeps the books through MemoryAccount: bytes
// committed (and their peak) and bytes handed out in blocks, the figures mallinfo2 reports.
//
// It also carries the run-time policy (StrataTunables) every layer above reads on its slow
// paths.
#pragma once
#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>

#include "strata/platform/clock.hpp"
#include "strata/platform/memory.hpp"
#include "strata/strata_heap/strata_tunables.hpp"
#include "strata/top/memory_account.hpp"

namespace strata {

// What AccountedSegments needs of its parent: aligned chunks with a segment map (SegmentHeap).
template <class S>
concept SegmentProvider = requires(S& s, const S& cs, std::size_t n, void* p) {
  { cs.chunkOf(p) } -> std::same_as<void*>;
  { s.malloc(n) } -> std::same_as<void*>;
  { s.mallocAligned(n, n, n) } -> std::same_as<void*>;
  { s.free(p) } -> std::same_as<void>;
  { s.growChunk(p, n) } -> std::same_as<void*>;
  { S::getSize(p) } -> std::same_as<std::size_t>;
  { s.trim() } -> std::same_as<std::size_t>;
  s.lockAll();
  s.unlockAll();
  { S::SegmentSize } -> std::convertible_to<std::size_t>;
  { S::HeaderBytes } -> std::convertible_to<std::size_t>;
};

// Figures for mallinfo2 / malloc_stats.
struct StrataHeapStats {
  std::size_t bytesFromSystem;      // committed: segment headers, slots in use or not yet
                                    // decommitted, huge chunks
  std::size_t bytesInUse;           // bytes of blocks carved in live pages plus huge objects
                                    // (an upper bound on live bytes)
  std::size_t peakBytesFromSystem;  // the high-water mark of bytesFromSystem
};

template <SegmentProvider Super>
class AccountedSegments : public Super {
 public:
  static constexpr std::size_t SegmentSize = Super::SegmentSize;
  static constexpr std::size_t ChunkHeaderBytes = Super::HeaderBytes;

  explicit AccountedSegments(const StrataTunables& t = {}) noexcept : tunables_(t) {}

  const StrataTunables& tunables() const noexcept { return tunables_; }

  // One segment (SegmentSize-aligned, reads as zero beyond its first OS page), or nullptr.
  void* allocSegment() noexcept { return Super::malloc(SegmentSize); }
  // A chunk of at least n bytes as SegmentHeap::mallocAligned gives it, or nullptr.
  void* allocChunk(std::size_t n, std::size_t align, std::size_t offset) noexcept {
    return Super::mallocAligned(n, align, offset);
  }
  void freeChunk(void* chunk) noexcept { Super::free(chunk); }
  // The chunk grown to n bytes by moving its pages (SegmentHeap::growChunk), or nullptr.
  void* growChunk(void* chunk, std::size_t n) noexcept { return Super::growChunk(chunk, n); }
  // The chunk cut to n bytes where it is (SegmentHeap::shrinkChunk); false when not shorter.
  bool shrinkChunk(void* chunk, std::size_t n) noexcept { return Super::shrinkChunk(chunk, n); }
  static std::size_t chunkSize(void* chunk) noexcept { return Super::getSize(chunk); }
  using Super::chunkOf;
  // Unmaps Super's cached segments; the bytes that went back.
  std::size_t trimChunks() noexcept { return Super::trim(); }

  // Gives [p, p + n) back to the system and counts it as no longer committed.
  void decommit(void* p, std::size_t n, platform::Decommit how) noexcept {
    platform::decommit(p, n, how);
    uncommit(n);
  }

  // Drops the pages of [p, p + n) so that they read as zero again; they stay committed (the
  // memory is in use, it is only cleared without being written).
  static void zeroPages(void* p, std::size_t n) noexcept {
    platform::decommit(p, n, platform::Decommit::Now);
  }

  // Page-aligned zeroed memory for metadata (per-thread records), or nullptr.
  static void* mapRecord(std::size_t n) noexcept { return platform::map(n); }
  static void unmapRecord(void* p, std::size_t n) noexcept { platform::unmap(p, n); }

  // The books: committed bytes (with their peak) and bytes handed out in blocks.
  void commit(std::size_t n) noexcept { committed_.charge(n); }
  void uncommit(std::size_t n) noexcept { committed_.refund(n); }
  void addInUse(std::size_t n) noexcept { inUse_.fetch_add(n, std::memory_order_relaxed); }
  void subInUse(std::size_t n) noexcept { inUse_.fetch_sub(n, std::memory_order_relaxed); }
  std::size_t committed() const noexcept { return committed_.held(); }

  // The purge clock (platform::nowMs: coarse, monotonic, no system call).
  static std::uint64_t nowMs() noexcept { return platform::nowMs(); }

  StrataHeapStats stats() const noexcept {
    return {committed_.held(), inUse_.load(std::memory_order_relaxed), committed_.peak()};
  }

 private:
  StrataTunables tunables_;
  MemoryAccount committed_;
  std::atomic<std::size_t> inUse_{0};
};

}  // namespace strata
