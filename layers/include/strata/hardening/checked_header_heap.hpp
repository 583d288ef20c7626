// CheckedHeaderHeap: a sealed 16-byte header before every object, checked on every free,
// realloc and size query, as LLVM's Scudo checks its chunk headers.
//
//     [size and state: 8][seal and offset: 8][object: n]
//
// The first word holds the size asked for (getSize returns exactly that: ExactSize), the
// object's state, live or freed, and whether mallocZeroed made it from memory that may never
// have been written (freeInspected says so); the second, the distance back to the parent's
// block (in 16-byte units; 1 for a plain object, more for an aligned one) and a 32-bit seal:
// a keyed tag (secret.hpp) of the object's address and the first word under the heap's
// random key, XOR the offset. What it catches:
//  - a double free (or a realloc or malloc_usable_size of a freed object) while the header's
//    second word is intact: freeing rewrites it to a "freed" mark (no key: all a forged one
//    can do is name an abort);
//  - a free of a pointer no object starts at (an interior pointer, the stack, a global):
//    there is no valid seal below it (a chance of 2^-32 that one is forged by accident);
//    over an OwningHeap parent, an address outside the heap's memory is reported as such
//    (looked up before anything below it is read when the header would lie on another page);
//  - a write before an object (an underflow from its lower neighbour) that reaches the
//    header: the seal no longer matches, reported on the object's free.
// Each is reported by reportHeapCorruption (one line, then abort). Not caught here: a double
// free after the parent reused the block for another object (the header is new and valid;
// a QuarantineHeap below delays reuse), and a double free after the parent wrote its own
// links over the header (then reported, but as an invalid free).
//
// Requires a parent aligned to 16 (SixteenAlignedHeap). Wraps the parent's mallocZeroed,
// reallocInPlace and reallocMoving when it has them; aligned objects are carved from a
// larger block (align + 16 extra bytes), the header just below the aligned address.
// The seal is also the object's secret for a layer above that keeps a check of its own in
// the object (objectSeal: CanaryHeap derives its canary from it, so it costs no multiply).
// Cost: 16 bytes an object; a multiply on malloc, one on free (and a map lookup for one
// object in 256, those at a page's start).
#pragma once
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "strata/concepts.hpp"
#include "strata/detail/align.hpp"
#include "strata/hardening/concepts.hpp"
#include "strata/hardening/corruption.hpp"
#include "strata/hardening/secret.hpp"
#include "strata/platform/page.hpp"

namespace strata {

template <SixteenAlignedHeap Super>
class CheckedHeaderHeap : public Super {
 public:
  static constexpr std::size_t Alignment = 16;
  static constexpr std::size_t HeaderSize = 16;
  static constexpr bool ExactSize = true;
  // The largest size a header holds (48 bits); larger requests fail with ENOMEM.
  static constexpr std::size_t MaxSize = (std::size_t{1} << 48) - 1;

  template <class... A>
  explicit CheckedHeaderHeap(A&&... a) noexcept
      : Super(static_cast<A&&>(a)...), key_(detail::freshSecret()) {}

  void* malloc(std::size_t n) noexcept {
    if (n > MaxSize) [[unlikely]] return tooLarge();
    void* b = Super::malloc(n + HeaderSize);
    return b != nullptr ? seal(b, 1, n) : nullptr;
  }

  // n bytes that read as zero (the parent's mallocZeroed, the header written over it).
  void* mallocZeroed(std::size_t n) noexcept
    requires ZeroingHeap<Super>
  {
    bool lazy;
    return mallocZeroedLazy(n, lazy);
  }

  // The same, saying whether the object may lie on pages never written (lazy): the parent's
  // word where it gives one (LazyZeroingHeap), else yes. The header records it, and
  // freeInspected passes it on.
  void* mallocZeroedLazy(std::size_t n, bool& lazy) noexcept
    requires ZeroingHeap<Super>
  {
    lazy = true;
    if (n > MaxSize) [[unlikely]] return tooLarge();
    void* b = mallocZeroedSaying(static_cast<Super&>(*this), n + HeaderSize, lazy);
    return b != nullptr ? seal(b, 1, n, lazy ? kLazyZero : 0) : nullptr;
  }

  // n bytes at a multiple of align (a power of two); carved from a block align + 16 bytes
  // larger, so the header sits below the aligned address. EINVAL for a bad alignment.
  void* memalign(std::size_t align, std::size_t n) noexcept {
    if (!detail::is_pow2(align)) {
      errno = EINVAL;
      return nullptr;
    }
    if (align <= Alignment) return malloc(n);
    std::size_t total;
    if (n > MaxSize || align > MaxSize || !detail::checked_add(n, align + HeaderSize, total))
      return tooLarge();
    auto* b = static_cast<std::byte*>(Super::malloc(total));
    if (b == nullptr) return nullptr;
    const std::uintptr_t at = detail::align_up(reinterpret_cast<std::uintptr_t>(b) + HeaderSize, align);
    const auto units = static_cast<std::uint32_t>((at - reinterpret_cast<std::uintptr_t>(b)) / 16);
    return seal(b + (units - 1) * 16, units, n);
  }

  // Checks the header, marks the object freed and gives its block back.
  void free(void* p) noexcept {
    if (p == nullptr) return;
    Header* h = vet(p);
    release(p, h);
  }

  // free, with inspect(n, lazy) called between the header check and the free (n: the size
  // p was asked for; lazy: mallocZeroed made it from memory that may never have been written,
  // and no realloc moved its end since): a layer above checks what it keeps in the object
  // without a second check of the header (CanaryHeap). The common case, an object neither on
  // a page's first bytes nor left lazily zeroed, runs inline and calls nothing that returns
  // (so it saves no registers); the others go out of line whole.
  template <class Inspect>
  [[gnu::always_inline]] void freeInspected(void* p, Inspect&& inspect) noexcept {
    if (oddPointer(p)) [[unlikely]] return freeInspectedSlowly(p, inspect);
    Header* h = vetHeader(p);
    if ((h->word & kLazyZero) != 0) [[unlikely]] return freeInspectedSlowly(p, inspect);
    inspect(static_cast<std::size_t>(h->word & kSizeMask), false);
    release(p, h);
  }

  // The size p was asked for (after checking its header); 0 for nullptr.
  std::size_t getSize(void* p) noexcept {
    return p != nullptr ? static_cast<std::size_t>(vet(p)->word & kSizeMask) : 0;
  }

  // The same for a live p, with lazy as freeInspected gives it.
  std::size_t getSizeLazy(void* p, bool& lazy) noexcept {
    const Header* h = vet(p);
    lazy = (h->word & kLazyZero) != 0;
    return static_cast<std::size_t>(h->word & kSizeMask);
  }

  // p resized to n where it is (the parent's block resized), or nullptr with p untouched.
  void* reallocInPlace(void* p, std::size_t n) noexcept
    requires ResizesInPlace<Super>
  {
    Header* h = vet(p);
    if (n > MaxSize) return nullptr;
    std::byte* b = blockOf(p, h);
    const std::size_t offset = static_cast<std::size_t>(static_cast<std::byte*>(p) - b);
    if (Super::reallocInPlace(b, offset + n) == nullptr) return nullptr;
    return seal(b + offset - HeaderSize, offsetUnits(h), n);
  }

  // p grown to n by moving its block's pages (the parent's reallocMoving), or nullptr with
  // p untouched.
  void* reallocMoving(void* p, std::size_t n) noexcept
    requires MovingHeap<Super>
  {
    Header* h = vet(p);
    if (n > MaxSize) return nullptr;
    std::byte* b = blockOf(p, h);
    const std::uint32_t units = offsetUnits(h);
    const std::size_t offset = static_cast<std::size_t>(static_cast<std::byte*>(p) - b);
    auto* moved = static_cast<std::byte*>(Super::reallocMoving(b, offset + n));
    if (moved == nullptr) return nullptr;
    return seal(moved + offset - HeaderSize, units, n);
  }

  // The second word of live p's header: a keyed value of p's address and its size (a new
  // one when a realloc resizes or moves p), which only the heap's key makes. For a layer
  // above that keeps a check of its own in the object (CanaryHeap): read it right after the
  // call that returned p, or while p is checked for a free, a resize or a size.
  std::uint64_t objectSeal(const void* p) const noexcept {
    return reinterpret_cast<const Header*>(static_cast<const std::byte*>(p) - HeaderSize)->check;
  }

  // A parent's way to allocate from its free blocks only would hand out objects without a
  // header: not passed on.
  void* mallocFromBins(std::size_t) = delete;

  // A pointer the layer above found foreign before it reached here (not 16-aligned).
  [[noreturn]] void foreignPointer(void* p) noexcept {
    reportHeapCorruption(HeapCorruption::InvalidFree, p);
  }

 private:
  struct Header {
    std::uint64_t word;   // size (48 bits) | state << 48
    std::uint64_t check;  // seal << 32 | offset in 16-byte units
  };
  static constexpr std::uint64_t kSizeMask = (std::uint64_t{1} << 48) - 1;
  static constexpr std::uint64_t kLive = std::uint64_t{1} << 48;
  static constexpr std::uint64_t kLazyZero = std::uint64_t{1} << 49;  // zeroed, maybe never written
  // The second word of a freed object's header: "FREE" and an offset of 0, which no live
  // header has (a live one's is 1 or more). Like any value not written by seal, it passes
  // the seal check by chance for one (address, first word) in 2^32.
  static constexpr std::uint64_t kFreedMark = 0x46524545ULL << 32;

  static void* tooLarge() noexcept {
    errno = ENOMEM;
    return nullptr;
  }

  static Header* headerOf(void* p) noexcept {
    return reinterpret_cast<Header*>(static_cast<std::byte*>(p) - HeaderSize);
  }
  static std::uint32_t offsetUnits(const Header* h) noexcept {
    return static_cast<std::uint32_t>(h->check);
  }
  static std::byte* blockOf(void* p, const Header* h) noexcept {
    return static_cast<std::byte*>(p) - std::size_t{offsetUnits(h)} * 16;
  }

  // The second word of a live header: the keyed tag of p and the first word (all its bits:
  // rotated, not shifted), XOR the offset, in the high half; the offset in the low half.
  // The offset is not an input of the tag, so no change of both words keeps the tag's input
  // the same: a new offset changes the seal by itself, which a write that does not know the
  // seal cannot follow.
  std::uint64_t sealOf(const void* p, std::uint64_t word, std::uint32_t units) const noexcept {
    return ((tagOf(p, word) & 0xffffffff00000000ULL) ^ (std::uint64_t{units} << 32)) | units;
  }
  // Whether check is the second word of a live header at p whose first word is word.
  bool sealed(const void* p, std::uint64_t word, std::uint64_t check) const noexcept {
    return ((check ^ (check << 32) ^ tagOf(p, word)) >> 32) == 0;
  }
  std::uint64_t tagOf(const void* p, std::uint64_t word) const noexcept {
    return detail::tag64(key_, reinterpret_cast<std::uintptr_t>(p) ^ std::rotl(word, 13));
  }

  // Writes the header of a live object of n bytes at h (units: its distance back to the
  // block; flags: kLazyZero or 0); returns the object.
  void* seal(void* at, std::uint32_t units, std::size_t n, std::uint64_t flags = 0) noexcept {
    auto* h = static_cast<Header*>(at);
    void* p = static_cast<std::byte*>(at) + HeaderSize;
    h->word = kLive | flags | n;
    h->check = sealOf(p, h->word, units);
    return p;
  }

  // Marks p freed and gives its block back; a parent that takes the bytes used (a
  // QuarantineHeap: freeUsed) is told them, the header's and the object's.
  void release(void* p, Header* h) noexcept {
    std::byte* b = blockOf(p, h);
    const std::size_t used = detail::align_up(
        static_cast<std::size_t>(static_cast<std::byte*>(p) - b) + static_cast<std::size_t>(h->word & kSizeMask),
        Alignment);
    h->check = kFreedMark;
    if constexpr (requires(Super& s) { s.freeUsed(p, used); }) {
      Super::freeUsed(b, used);
    } else {
      Super::free(b);
    }
  }

  // p's header, once it proves p is a live object of this heap; otherwise reports and aborts.
  // Over an OwningHeap parent, an address the heap does not own is named as foreign; the
  // lookup is made first only when the header would lie on the page below p's (which may
  // not be mapped), else only when the seal does not match: reading 16 bytes below p on
  // p's own page cannot fault where p itself is mapped.
  [[gnu::always_inline]] Header* vet(void* p) noexcept {
    if (oddPointer(p)) [[unlikely]] vetOddPointer(p);
    return vetHeader(p);
  }

  // vet's seal check alone, for a p that is not an oddPointer.
  [[gnu::always_inline]] Header* vetHeader(void* p) noexcept {
    Header* h = headerOf(p);
    const std::uint64_t word = h->word, check = h->check;
    if (sealed(p, word, check)) [[likely]] return h;
    reportBadHeader(p, check);
  }

  // freeInspected out of line, for any p.
  template <class Inspect>
  [[gnu::noinline]] void freeInspectedSlowly(void* p, Inspect inspect) noexcept {
    Header* h = vet(p);
    inspect(static_cast<std::size_t>(h->word & kSizeMask), (h->word & kLazyZero) != 0);
    release(p, h);
  }

  // A pointer vet must look at first: misaligned, or on a page's first bytes.
  static bool oddPointer(const void* p) noexcept {
    return !detail::is_aligned(p, Alignment) || onFirstBytesOfPage(p);
  }

  static bool onFirstBytesOfPage(const void* p) noexcept {
    return (reinterpret_cast<std::uintptr_t>(p) & (platform::kPageSize - 1)) < HeaderSize;
  }

  // A misaligned p is no object's; one whose header would lie on the page below must be the
  // parent's before that is read.
  [[gnu::noinline]] void vetOddPointer(void* p) noexcept {
    if (!detail::is_aligned(p, Alignment)) reportHeapCorruption(HeapCorruption::InvalidFree, p);
    vetOwner(p);
  }

  // p's header is not a live one: p is foreign, or freed (its freed mark), or no object's.
  [[gnu::cold, gnu::noinline, noreturn]] void reportBadHeader(void* p, std::uint64_t check) noexcept {
    vetOwner(p);
    if (check == kFreedMark) reportHeapCorruption(HeapCorruption::DoubleFree, p);
    reportHeapCorruption(HeapCorruption::InvalidFree, p);
  }

  // Reports p as foreign unless the parent owns it (nothing to ask of a parent that cannot
  // tell).
  void vetOwner(void* p) noexcept {
    if constexpr (OwningHeap<Super>) {
      if (!Super::owns(p)) [[unlikely]] reportHeapCorruption(HeapCorruption::ForeignPointer, p);
    }
  }

  std::uint64_t key_;
};

}  // namespace strata
