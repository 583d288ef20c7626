// SegHeap: segregated fits that searches. Freed objects are kept in bins by size class; a
// request is served from an object of the bin just below its class that happens to fit (a
// few of them are looked at), else from its own class's bin or, failing that, from any
// larger bin, and goes to the parent only when none has one. With a coalescing layer above
// and boundary tags below (CoalesceHeap, CoalesceableHeap) this is approximate best fit.
//
// Bin c holds only objects of at least class2size(c) bytes: free puts an object into the
// largest class whose size does not exceed the object's, so whatever a searched bin yields
// fits (and an object of the bin below fits only if its size says so). Objects bigger than
// the last class go into the last bin (they are kept, not given to the parent, so a
// coalescing heap can split them later); requests bigger than the last class go straight to
// the parent. A bitmap of non-empty bins makes the search a few word scans rather than a
// walk over empty bins.
//
// Bins are LittleHeap<NullHeap>: stores that hold freed objects and yield nullptr when
// empty, typically DLListHeap (which also offers remove(p), needed under CoalesceHeap).
#pragma once
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>

#include "strata/combining/size_classes.hpp"
#include "strata/concepts.hpp"
#include "strata/top/null_heap.hpp"

namespace strata {

// dlmalloc-like classes: exact 16-byte steps up to 512 bytes (classes 0..31), then four
// classes per power of two (640, 768, 896, 1024, 1280, ...). Both maps are a few shifts.
struct LeaClasses {
  static constexpr unsigned size2class(std::size_t n) noexcept {
    if (n <= 512) return n <= 16 ? 0u : static_cast<unsigned>((n - 1) / 16);
    const unsigned octave = static_cast<unsigned>(std::bit_width(n - 1)) - 10;
    const std::size_t step = (n - 1 - (std::size_t{512} << octave)) >> (7 + octave);
    return 32 + 4 * octave + static_cast<unsigned>(step);
  }
  static constexpr std::size_t class2size(unsigned c) noexcept {
    if (c < 32) return (c + 1) * std::size_t{16};
    const unsigned octave = (c - 32) / 4, step = (c - 32) % 4;
    return (std::size_t{512} << octave) + (step + 1) * (std::size_t{128} << octave);
  }
};

// Classes shifted up by Offset bytes: class c holds Classes::class2size(c) + Offset. For
// parents whose usable sizes are all Offset more than a multiple of 16, such as
// CoalesceableHeap's (block size - 8): ShiftedClasses<LeaClasses, 8> gives one exact class per
// usable size up to 520 bytes, so an object freed at one size is found again in its own bin
// by a request of that size rather than only by smaller ones. Cost: a compare and a subtract.
template <SizeClasses Classes, std::size_t Offset>
struct ShiftedClasses {
  static constexpr unsigned size2class(std::size_t n) noexcept {
    return Classes::size2class(n > Offset ? n - Offset : 0);
  }
  static constexpr std::size_t class2size(unsigned c) noexcept {
    return Classes::class2size(c) + Offset;
  }
};

template <unsigned NumBins, SizeClasses Classes, template <class> class LittleHeap,
          SizedHeap Super>
class SegHeap : public Super {
  static_assert(NumBins >= 1, "SegHeap: needs at least one bin");

 public:
  using Bin = LittleHeap<NullHeap<Super::Alignment>>;
  static_assert(Heap<Bin>, "SegHeap: LittleHeap<NullHeap> must be a Heap");
  static constexpr std::size_t Alignment = Super::Alignment;
  static constexpr std::size_t MinClassSize = Classes::class2size(0);
  static constexpr std::size_t MaxClassSize = Classes::class2size(NumBins - 1);

  using Super::Super;
  SegHeap() = default;
  SegHeap(const SegHeap&) = delete;
  SegHeap& operator=(const SegHeap&) = delete;
  ~SegHeap() { release(); }

  // A free object that fits from the bins, else a new one from the parent. Fast path: the
  // class lookup, a bitmap test for the bin below, a masked bitmap word, a
  // count-trailing-zeros and a bin pop.
  void* malloc(std::size_t n) noexcept {
    if (void* p = mallocFromBins(n)) return p;
    return Super::malloc(n);
  }

  // Only from the bins: nullptr when no stored object fits (the parent is not asked).
  void* mallocFromBins(std::size_t n) noexcept {
    if (n > MaxClassSize) return nullptr;
    const unsigned c = Classes::size2class(n);
    if (c > 0) {
      if (void* p = probeBelow(c, n)) return p;
    }
    return search(c);
  }

  // Keeps p in the bin of the largest class not bigger than p. Cost: a getSize, the class
  // lookup, the bin's free and a bit set. Objects smaller than every class go to the parent
  // (a test compiled away when the parent promises a MinPayload of at least class 0).
  void free(void* p) noexcept {
    if (p == nullptr) return;
    const std::size_t size = Super::getSize(p);
    if (kMayHoldTinyObjects && size < MinClassSize) {
      Super::free(p);
      return;
    }
    const unsigned c = binFor(size);
    bins_[c].free(p);
    map_[c / 64] |= bit(c);
  }

  // Takes the free object p (which must be stored here, at its current size) out of its bin.
  void remove(void* p) noexcept
    requires requires(Bin& b, void* q) { b.remove(q); }
  {
    const unsigned c = binFor(Super::getSize(p));
    bins_[c].remove(p);
    noteTaken(c);
  }

  // Frees everything at once: the bins forget their objects and the parent is cleared.
  void clear() noexcept
    requires ClearableHeap<Super>
  {
    for (unsigned c = 0; c < NumBins; ++c) {
      while (bins_[c].malloc(Classes::class2size(c)) != nullptr) {
      }
    }
    for (auto& word : map_) word = 0;
    Super::clear();
  }

 private:
  static constexpr unsigned kWords = (NumBins + 63) / 64;
  static constexpr unsigned kProbes = 4;

  // False when the parent's objects are never smaller than the smallest class.
  static constexpr bool kMayHoldTinyObjects = [] {
    if constexpr (requires { { Super::MinPayload } -> std::convertible_to<std::size_t>; }) {
      return Super::MinPayload < MinClassSize;
    } else {
      return true;
    }
  }();

  static constexpr std::uint64_t bit(unsigned c) noexcept { return std::uint64_t{1} << (c % 64); }

  // The bin for a stored object of `size` (>= MinClassSize) bytes.
  static unsigned binFor(std::size_t size) noexcept {
    if (size >= MaxClassSize) return NumBins - 1;
    unsigned c = Classes::size2class(size);
    if (Classes::class2size(c) > size) --c;
    return c;
  }

  // Pops an object from the first non-empty bin at or above c.
  void* search(unsigned c) noexcept {
    unsigned w = c / 64;
    std::uint64_t bits = map_[w] & (~std::uint64_t{0} << (c % 64));
    for (;;) {
      while (bits == 0) {
        if (++w == kWords) return nullptr;
        bits = map_[w];
      }
      const unsigned i = w * 64 + static_cast<unsigned>(std::countr_zero(bits));
      if (void* p = bins_[i].malloc(Classes::class2size(i))) {
        noteTaken(i);
        return p;
      }
      // Only bins that cannot report emptiness get here: their bit was stale.
      map_[w] &= ~bit(i);
      bits &= bits - 1;
    }
  }

  // The tightest fits first: bin c - 1, just below the request's class c, holds objects of
  // at least class2size(c - 1) bytes, some of which may hold n. Looks at up to kProbes of its
  // oldest objects, takes the first that fits and puts the others back (at the young end of
  // a FIFO bin). Searching only from the request's own class would pass these over for
  // bigger blocks, or grow the heap while they lie free: with LeaClasses, 4 bins per
  // doubling above 512 bytes, that doubles LeaHeap's fragmentation on phased workloads
  // (bench/gp_table, mixed-phases: 13 % against 6 %). Object sizes are multiples of 8 (and
  // of 16 apart within a heap), so nothing in bin c - 1 can fit when n > class2size(c) - 8
  // (a request at its class's size, as KingsleyCoalesceHeap makes) or when the classes are
  // 16 apart (exact classes). Cost: a bitmap test and two compares; only when an object
  // could fit, a getSize per object looked at and a pop and a push for each that does not.
  void* probeBelow(unsigned c, std::size_t n) noexcept {
    const unsigned below = c - 1;
    if ((map_[below / 64] & bit(below)) == 0 || n + 8 > Classes::class2size(c) ||
        Classes::class2size(c) - Classes::class2size(below) <= 16)
      return nullptr;
    return probe(below, n);
  }
  [[gnu::noinline]] void* probe(unsigned c, std::size_t n) noexcept {
    for (unsigned i = 0; i < kProbes; ++i) {
      void* p = bins_[c].malloc(Classes::class2size(c));
      if (p == nullptr) {
        map_[c / 64] &= ~bit(c);
        return nullptr;
      }
      if (Super::getSize(p) >= n) {
        noteTaken(c);
        return p;
      }
      bins_[c].free(p);
    }
    return nullptr;
  }

  // Clears bin i's bit once it is empty, when the bin can tell; otherwise the bit is
  // cleared lazily by the first search that finds the bin empty.
  void noteTaken(unsigned i) noexcept {
    if constexpr (requires(const Bin& b) { { b.empty() } -> std::same_as<bool>; }) {
      if (bins_[i].empty()) map_[i / 64] &= ~bit(i);
    }
  }

  // Gives every stored object back to the parent (at destruction).
  void release() noexcept {
    for (unsigned c = 0; c < NumBins; ++c) {
      while (void* p = bins_[c].malloc(Classes::class2size(c))) Super::free(p);
    }
    for (auto& word : map_) word = 0;
  }

  Bin bins_[NumBins];
  std::uint64_t map_[kWords] = {};
};

}  // namespace strata
