// CoalesceableHeap: boundary tags, the object representation that coalescing needs, with
// dlmalloc's overlapping layout so that an allocated block costs one word.
//
// A block starts with two words, prevSize and the header word, and its payload follows:
//
//     [ . | word A ][ payload A ......... | prevSize B ][ word B ][ payload B ... ]  [ word F ]
//       block A starts here                ^ last 8 bytes of A's payload           fence
//
// `word` is the shared header word (strata/detail/header.hpp): the BLOCK size (from this
// header word to the next block's, a multiple of 16) with flags in its low bits:
//   kFlagInUse      this block is allocated (clear while it sits in a free store),
//   kFlagPrevInUse  the physically preceding block is not free,
//   kFlagFirstInRun there is no preceding block.
// `prevSize` is the size of the preceding block and is written only when that block becomes
// free. While the preceding block is in use its program owns those 8 bytes as the tail of
// its payload, so prevSize is meaningful only when kFlagPrevInUse is clear. Hence a block of
// size B serves B - 8 usable bytes (getSize), a request of n bytes takes a block of
// max(32, align16(n + 8)), and the minimum block (32) leaves room, while it is free, for a
// DLList's two links and the footer (prevSize of the next block) that marking it free writes.
//
// A run (memory obtained from the parent in one piece) starts with an unused word (the first
// block's prevSize, which nothing precedes) and ends with a fence: a header word of size 0
// marked in use, so walking to the next block never leaves the run and the last block never
// looks like it has a free successor. The fence's kFlagPrevInUse tracks the last block like
// any other successor's. Run overhead: those two words, 16 bytes.
//
// When the parent grows contiguously (ContiguousHeap in strata/concepts.hpp) and its next
// memory starts right where the previous run ended, the old fence becomes the new block's
// header (keeping its kFlagPrevInUse), so consecutive parent requests form one run and blocks
// merge across them; and a free block at the end of the run can grow in place
// (lastFreeBlock, extendLast), taking from the parent only what it lacks.
//
// This layer does not coalesce; it provides the static helpers CoalesceHeap uses (split,
// merge, neighbours, free bits), each of which keeps the successor's kFlagPrevInUse and, for
// a free block, the footer right; and it formats fresh runs. MmapHeap::isMapped() is false
// for its blocks (kFlagMmapped is never set).
#pragma once
#include <cerrno>
#include <concepts>
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
  static constexpr std::size_t Overhead = sizeof(std::size_t);  // the header word
  static constexpr std::size_t MinBlockSize = 32;
  static constexpr std::size_t MinPayload = MinBlockSize - Overhead;
  static constexpr std::size_t RunOverhead = 2 * sizeof(std::size_t);  // first prevSize, fence

  using Super::Super;
  CoalesceableHeap() = default;
  CoalesceableHeap(const CoalesceableHeap&) = delete;
  CoalesceableHeap& operator=(const CoalesceableHeap&) = delete;

  // Gets new memory from the parent holding one in-use block for n bytes, followed by a
  // fence: a run of its own, or, when the parent is contiguous and will continue right after
  // the last fence, an extension of the last run that reuses that fence as the new block's
  // header. Cost: the parent's malloc plus two header stores. Overflow: ENOMEM.
  void* malloc(std::size_t n) noexcept {
    std::size_t block;
    if (!blockFor(n, block)) return outOfMemory();
    if constexpr (requires(Super& s, void* at) {
                    { s.extendAt(at, block) } -> std::same_as<void*>;
                  }) {
      // The parent can say in one step whether it continues the run: the common case of a
      // bump-pointer parent, kept straight-line and small enough to inline into the caller's
      // loop (a compare, an add, three header stores); anything else is out of line.
      if (void* mem = Super::extendAt(lastEnd_, block)) [[likely]] {
        return continueRun(detail::bytes(mem), block);
      }
      return newRunOutOfLine(block);
    } else {
      if constexpr (ContiguousHeap<Super>) {
        if (lastEnd_ != nullptr && Super::top() == lastEnd_) {
          void* mem = Super::malloc(block);
          if (mem == nullptr) return nullptr;
          if (mem == lastEnd_) return continueRun(detail::bytes(mem), block);
          Super::free(mem);  // top() promised otherwise; start a run of its own instead
        }
      }
      return newRun(block);
    }
  }

  // With a contiguous parent: the free block that ends the run the parent will continue, or
  // nullptr. That block can grow in place (extendLast), as dlmalloc's top chunk does, rather
  // than be left behind when a request does not fit it. Cost: three loads and two compares.
  void* lastFreeBlock() const noexcept
    requires ContiguousHeap<Super>
  {
    if (lastEnd_ == nullptr || Super::top() != lastEnd_ || !isPrevFree(lastEnd_)) return nullptr;
    return prev(lastEnd_);
  }

  // Grows `last`, the free block lastFreeBlock() returned (and its owner has taken out of
  // its free store), in place to hold n bytes, taking only the shortfall from the parent, and
  // returns it marked in use (it may be bigger than n needs; the caller splits). nullptr,
  // with `last` untouched, when the parent cannot give the shortfall right after it.
  void* extendLast(void* last, std::size_t n) noexcept
    requires ContiguousHeap<Super>
  {
    std::size_t block;
    if (!blockFor(n, block)) return outOfMemory();
    const std::size_t have = blockSize(last);
    if (block > have) {
      void* mem = Super::malloc(block - have);
      if (mem == nullptr) return nullptr;
      if (mem != lastEnd_) {
        Super::free(mem);
        return nullptr;
      }
    } else {
      block = have;
    }
    const std::size_t keep = detail::header_word(last) & detail::kFlagMask;
    detail::header_word(last) = block | keep | detail::kFlagInUse;
    std::byte* fence = detail::bytes(last) + block;
    detail::header_word(fence) = detail::kFlagInUse | detail::kFlagPrevInUse;
    lastEnd_ = fence;
    return last;
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
    Super::free(detail::bytes(p) - RunOverhead);
  }

  // Frees every run at once; the next malloc starts a fresh run.
  void clear() noexcept
    requires ClearableHeap<Super>
  {
    lastEnd_ = nullptr;
    Super::clear();
  }

  // The usable size of p: the block size less the header word (a load, a mask and a
  // subtract). 0 for nullptr; p must not be a fence.
  static std::size_t getSize(void* p) noexcept { return p ? blockSize(p) - Overhead : 0; }

  // The usable size a request of n bytes gets (n must be one the heap could satisfy):
  // always 8 more than a multiple of 16, at least MinPayload.
  static constexpr std::size_t usableFor(std::size_t n) noexcept {
    return (n <= MinPayload ? MinBlockSize : detail::align_up(n + Overhead, 16)) - Overhead;
  }

  // The block size of the block physically before p: meaningful only when isPrevFree(p).
  static std::size_t& prevSize(void* p) noexcept {
    return *(reinterpret_cast<std::size_t*>(p) - 2);
  }

  // The whole block, header word to next header word (p must not be nullptr).
  static std::size_t blockSize(void* p) noexcept {
    return detail::header_word(p) & ~detail::kFlagMask;
  }

  // The payload of the physically next block (possibly the fence).
  static void* next(void* p) noexcept { return detail::bytes(p) + blockSize(p); }

  // The payload of the physically previous block; only when isPrevFree(p).
  static void* prev(void* p) noexcept { return detail::bytes(p) - prevSize(p); }

  // The in-use bit: clear while the block sits in a free store, set otherwise (fences too).
  static bool isFree(void* p) noexcept {
    return (detail::header_word(p) & detail::kFlagInUse) == 0;
  }

  // Marks p free: clears its in-use bit, writes its size into the successor's prevSize (the
  // last word of p's payload, no longer the program's) and clears the successor's
  // kFlagPrevInUse. Cost: a load and three stores.
  static void markFree(void* p) noexcept {
    const std::size_t word = detail::header_word(p) & ~detail::kFlagInUse;
    detail::header_word(p) = word;
    const std::size_t size = word & ~detail::kFlagMask;
    std::byte* after = detail::bytes(p) + size;
    prevSize(after) = size;
    detail::header_word(after) &= ~detail::kFlagPrevInUse;
  }

  // Marks p in use: sets its in-use bit and the successor's kFlagPrevInUse (from now on the
  // successor's prevSize is p's payload). Cost: two read-modify-writes.
  static void markInUse(void* p) noexcept {
    detail::header_word(p) |= detail::kFlagInUse;
    detail::header_word(next(p)) |= detail::kFlagPrevInUse;
  }

  // Where p sits in its run: first (no predecessor), last (the fence follows), or the fence.
  static bool firstInRun(void* p) noexcept {
    return (detail::header_word(p) & detail::kFlagFirstInRun) != 0;
  }
  static bool lastInRun(void* p) noexcept { return blockSize(next(p)) == 0; }
  static bool isFence(void* p) noexcept { return blockSize(p) == 0; }

  // True when the block before p exists and is free: one load (the first block of a run
  // always has kFlagPrevInUse).
  static bool isPrevFree(void* p) noexcept {
    return (detail::header_word(p) & detail::kFlagPrevInUse) == 0;
  }

  // True when the block after p is free (a fence is in use, so never past the run's end).
  static bool isNextFree(void* p) noexcept { return isFree(next(p)); }

  // Shrinks p to `usable` bytes (a value of usableFor, at most getSize(p)) when what is left
  // makes a block of at least MinBlockSize, and returns that remainder as a new in-use block;
  // otherwise leaves p alone and returns nullptr. p keeps its flags; the remainder's
  // kFlagPrevInUse (and, if p is free, its prevSize) follows p's state, and the block after
  // the remainder gets kFlagPrevInUse.
  static void* split(void* p, std::size_t usable) noexcept {
    const std::size_t total = blockSize(p);
    const std::size_t keep = usable + Overhead;
    if (total < keep + MinBlockSize) return nullptr;
    const std::size_t rest = total - keep;
    const std::size_t word = detail::header_word(p);
    detail::header_word(p) = keep | (word & detail::kFlagMask);
    std::byte* r = detail::bytes(p) + keep;
    if ((word & detail::kFlagInUse) != 0) {
      detail::header_word(r) = rest | detail::kFlagInUse | detail::kFlagPrevInUse;
    } else {
      prevSize(r) = keep;
      detail::header_word(r) = rest | detail::kFlagInUse;
    }
    detail::header_word(r + rest) |= detail::kFlagPrevInUse;
    return r;
  }

  // Joins b, the block physically after a, into a; a keeps its flags, and the block after
  // the merged one sees a's state (footer and cleared kFlagPrevInUse if a is free).
  static void merge(void* a, void* b) noexcept {
    const std::size_t total = blockSize(a) + blockSize(b);
    const std::size_t word = detail::header_word(a);
    detail::header_word(a) = total | (word & detail::kFlagMask);
    std::byte* after = detail::bytes(a) + total;
    if ((word & detail::kFlagInUse) != 0) {
      detail::header_word(after) |= detail::kFlagPrevInUse;
    } else {
      prevSize(after) = total;
      detail::header_word(after) &= ~detail::kFlagPrevInUse;
    }
  }

 private:
  // The block a request of n bytes takes, false when that overflows.
  static bool blockFor(std::size_t n, std::size_t& block) noexcept {
    if (n <= MinPayload) {
      block = MinBlockSize;
      return true;
    }
    return detail::checked_add(n, Overhead, block) && detail::checked_align_up(block, 16, block);
  }

  [[gnu::cold, gnu::noinline]] static void* outOfMemory() noexcept {
    errno = ENOMEM;
    return nullptr;
  }

  // The block at p, where the last run's fence was: the fence becomes p's header (keeping
  // what it knew of the block before), and a new fence follows p.
  void* continueRun(std::byte* p, std::size_t block) noexcept {
    detail::header_word(p) =
        block | detail::kFlagInUse | (detail::header_word(p) & detail::kFlagPrevInUse);
    std::byte* fence = p + block;
    detail::header_word(fence) = detail::kFlagInUse | detail::kFlagPrevInUse;
    lastEnd_ = fence;
    return p;
  }

  // A run of its own for one block of `block` bytes: first prevSize, the block, a fence.
  void* newRun(std::size_t block) noexcept {
    std::size_t total;
    if (!detail::checked_add(block, RunOverhead, total)) return outOfMemory();
    std::byte* mem = detail::bytes(Super::malloc(total));
    if (mem == nullptr) return nullptr;
    std::byte* p = mem + RunOverhead;
    detail::header_word(p) =
        block | detail::kFlagInUse | detail::kFlagPrevInUse | detail::kFlagFirstInRun;
    std::byte* fence = p + block;
    detail::header_word(fence) = detail::kFlagInUse | detail::kFlagPrevInUse;
    if constexpr (ContiguousHeap<Super>) lastEnd_ = fence;
    return p;
  }
  [[gnu::noinline]] void* newRunOutOfLine(std::size_t block) noexcept { return newRun(block); }

  // Where the last run from a contiguous parent ended (its fence's payload address).
  void* lastEnd_ = nullptr;
};

}  // namespace strata
