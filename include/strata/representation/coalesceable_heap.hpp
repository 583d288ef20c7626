// CoalesceableHeap: boundary tags, the object representation that coalescing needs.
//
// Every block carries a 16-byte header just below its payload:
//
//     [ prevSize | word ][ payload ... ][ prevSize | word ][ payload ... ] ... [ prevSize | 1 ]
//       block A header                    block B header                        fence
//
// `word` is the shared header word (strata/detail/header.hpp): the usable size (block size
// minus the header, a multiple of 16) with kFlagInUse set while the block is allocated, so
// getSize() is one load and MmapHeap::isMapped() is false for these blocks. `prevSize` is
// the block size of the physically preceding block, 0 for the first block of a run, so a
// block finds both neighbours in O(1). A run (memory obtained from the parent in one piece)
// ends with a fence, a bare header of size 0 marked in use, so that walking to the next block
// never leaves the run and the last block never looks like it has a free successor.
//
// When the parent grows contiguously (SbrkHeap: ContiguousHeap in strata/concepts.hpp) and its next memory
// starts right where the previous run ended, the old fence becomes the new block's header,
// so consecutive parent requests form one run and blocks can merge across them.
//
// This layer does not coalesce; it provides the static helpers CoalesceHeap uses (split,
// merge, neighbours, free bits) and formats fresh runs. Minimum block: 16 bytes of header and
// 16 of payload, room for a DLList's two links while the block is free.
#pragma once
#include <cerrno>
#include <cstddef>

#include "strata/concepts.hpp"
#include "strata/detail/align.hpp"
#include "strata/detail/header.hpp"

namespace strata {

template <Heap Super>
class CoalesceableHeap : public Super {
  static_assert(Super::Alignment >= 16,
                "CoalesceableHeap: the parent must align to 16 so headers and payloads align");

 public:
  static constexpr std::size_t Alignment = 16;
  static constexpr std::size_t HeaderSize = 16;
  static constexpr std::size_t MinPayload = 16;
  static constexpr std::size_t MinBlockSize = HeaderSize + MinPayload;

  using Super::Super;
  CoalesceableHeap() = default;
  CoalesceableHeap(const CoalesceableHeap&) = delete;
  CoalesceableHeap& operator=(const CoalesceableHeap&) = delete;

  // Gets new memory from the parent holding one in-use block of at least n bytes, followed by
  // a fence: a run of its own, or, when the parent is contiguous and will continue right
  // after the last fence, an extension of the last run that reuses that fence as the new
  // block's header. Cost: the parent's malloc plus four header stores. Overflow: ENOMEM.
  void* malloc(std::size_t n) noexcept {
    std::size_t usable, total;
    if (!detail::checked_align_up(n < MinPayload ? MinPayload : n, 16, usable) ||
        !detail::checked_add(usable, 2 * HeaderSize, total)) {
      errno = ENOMEM;
      return nullptr;
    }
    std::byte* p = nullptr;
    if constexpr (ContiguousHeap<Super>) {
      if (lastEnd_ != nullptr && Super::top() == lastEnd_) {
        void* mem = Super::malloc(total - HeaderSize);
        if (mem == nullptr) return nullptr;
        if (mem == lastEnd_) {
          p = detail::bytes(mem);  // the old fence, with its prevSize, is p's header
        } else {
          Super::free(mem);  // top() promised otherwise; start a run of its own instead
        }
      }
    }
    if (p == nullptr) {
      std::byte* mem = detail::bytes(Super::malloc(total));
      if (mem == nullptr) return nullptr;
      p = mem + HeaderSize;
      prevSize(p) = 0;
    }
    detail::header_word(p) = usable | detail::kFlagInUse;
    std::byte* fence = p + usable + HeaderSize;
    prevSize(fence) = usable + HeaderSize;
    detail::header_word(fence) = detail::kFlagInUse;
    if constexpr (ContiguousHeap<Super>) lastEnd_ = fence;
    return p;
  }

  // Gives a block that spans a whole run back to the parent. Any other block cannot be
  // returned on its own: it is marked in use and stays where it is, so no neighbour ever
  // merges with it. (CoalesceHeap only frees here at teardown, when runs are whole unless
  // the program leaked objects.) Cost: three header loads.
  void free(void* p) noexcept {
    if (p == nullptr) return;
    if (!firstInRun(p) || !lastInRun(p)) {
      markInUse(p);
      return;
    }
    if constexpr (ContiguousHeap<Super>) {
      if (next(p) == lastEnd_) lastEnd_ = nullptr;  // the fence is gone: never join to it
    }
    Super::free(detail::bytes(p) - HeaderSize);
  }

  // Frees every run at once; the next malloc starts a fresh run.
  void clear() noexcept
    requires ClearableHeap<Super>
  {
    lastEnd_ = nullptr;
    Super::clear();
  }

  // The usable size of p: one load and a mask. 0 for a fence (and for nullptr).
  static std::size_t getSize(void* p) noexcept {
    return p ? detail::header_word(p) & ~detail::kFlagMask : 0;
  }

  // The usable size a request of n bytes needs (n must be one the heap could satisfy).
  static constexpr std::size_t usableFor(std::size_t n) noexcept {
    return detail::align_up(n < MinPayload ? MinPayload : n, 16);
  }

  // The block size of the block physically before p (0 when p starts its run).
  static std::size_t& prevSize(void* p) noexcept {
    return *(reinterpret_cast<std::size_t*>(p) - 2);
  }

  // The whole block: header plus usable size (p must not be nullptr).
  static std::size_t blockSize(void* p) noexcept { return sizeField(p) + HeaderSize; }

  // The payload of the physically next block (possibly the fence).
  static void* next(void* p) noexcept { return detail::bytes(p) + blockSize(p); }

  // The payload of the physically previous block; only when !firstInRun(p).
  static void* prev(void* p) noexcept { return detail::bytes(p) - prevSize(p); }

  // The in-use bit: clear while the block sits in a free store, set otherwise (fences too).
  static bool isFree(void* p) noexcept {
    return (detail::header_word(p) & detail::kFlagInUse) == 0;
  }
  static void markFree(void* p) noexcept { detail::header_word(p) &= ~detail::kFlagInUse; }
  static void markInUse(void* p) noexcept { detail::header_word(p) |= detail::kFlagInUse; }

  // Where p sits in its run: first (no predecessor), last (the fence follows), or the fence.
  static bool firstInRun(void* p) noexcept { return prevSize(p) == 0; }
  static bool lastInRun(void* p) noexcept { return sizeField(next(p)) == 0; }
  static bool isFence(void* p) noexcept { return sizeField(p) == 0; }

  // True when the block before p exists and is free: two loads.
  static bool isPrevFree(void* p) noexcept { return !firstInRun(p) && isFree(prev(p)); }

  // True when the block after p is free (a fence is in use, so never past the run's end).
  static bool isNextFree(void* p) noexcept { return isFree(next(p)); }

  // Shrinks p to `usable` bytes (a multiple of 16, at least MinPayload, at most getSize(p))
  // when what is left makes a block of at least MinBlockSize, and returns that remainder as
  // a new in-use block; otherwise leaves p alone and returns nullptr. p keeps its flags.
  static void* split(void* p, std::size_t usable) noexcept {
    const std::size_t total = blockSize(p);
    const std::size_t keep = usable + HeaderSize;
    if (total < keep + MinBlockSize) return nullptr;
    const std::size_t rest = total - keep;
    detail::header_word(p) = usable | (detail::header_word(p) & detail::kFlagMask);
    std::byte* r = detail::bytes(p) + keep;
    prevSize(r) = keep;
    detail::header_word(r) = (rest - HeaderSize) | detail::kFlagInUse;
    prevSize(r + rest) = rest;
    return r;
  }

  // Joins b, the block physically after a, into a; a keeps its flags.
  static void merge(void* a, void* b) noexcept {
    const std::size_t total = blockSize(a) + blockSize(b);
    detail::header_word(a) = (total - HeaderSize) | (detail::header_word(a) & detail::kFlagMask);
    prevSize(detail::bytes(a) + total) = total;
  }

 private:
  // The size field of p's header, without getSize's nullptr test.
  static std::size_t sizeField(void* p) noexcept {
    return detail::header_word(p) & ~detail::kFlagMask;
  }

  // Where the last run from a contiguous parent ended (its fence's payload address).
  void* lastEnd_ = nullptr;
};

}  // namespace strata
