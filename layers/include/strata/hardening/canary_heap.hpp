// CanaryHeap: eight canary bytes right after every object, checked when it is freed or
// resized, so a write past the object's end (a linear overflow into the neighbour, its
// header or a free-list link) is caught at the object's next free or realloc.
//
// The canary is a keyed value of the object, with its first byte zero (a string copy that
// overruns stops at it, so it cannot write the canary back). Over a parent that seals its
// objects (SealingHeap: CheckedHeaderHeap), it is the object's seal (objectSeal, keyed by
// the address and the size) XOR this layer's own random key: nothing to compute, and to
// forge one an overflow needs both the seal and the key; a leaked canary gives neither, nor
// any other object's canary. Over any other exact-sized parent, it is a keyed tag of the
// object's address (secret.hpp), one multiply.
// It sits exactly at the end of the object as asked, which the parent knows because its
// getSize is the size asked for (ExactSizedHeap: CheckedHeaderHeap); even a one-byte
// overflow lands on it. A damaged canary is reported by reportHeapCorruption (one line
// naming the first damaged byte's address, then abort).
//
// The canaries can be turned off when the heap is built (CanaryOptions; libstrata-secure.so's
// STRATA_CANARIES=0): the layer then passes every call through, at the cost of one branch.
//
// A zeroed object (mallocZeroed) of kLazyFrom bytes or more gets no canary written when it
// may lie on pages never written: its tail already reads as zero, and writing the canary
// would make a page resident that a sparse calloc never touches. A parent that says which
// zeroed objects those are (LazyZeroingHeap: StrataHeap's fresh blocks, its spans and huge
// objects) spares the rest, the blocks it cleared itself, which get their canary. So from
// that size an all-zero canary passes the check too (over CheckedHeaderHeap, whose header
// records which objects were left without one, for those only, on free and realloc alike);
// and the free of such an object reads its canary only when the page it lies on is
// resident (mincore: a page nothing wrote to is not), so a sparse calloc's untouched end
// stays untouched.
//
// Not caught: an overflow that writes only zeros over the canary of an object left without
// one, an overflow that skips the canary (a write at an index far past the end), a
// write past the end that the program undoes before the free, and an object never freed.
// Cost: 8 bytes an object; an unaligned 8-byte store on malloc, the parent's getSize and a
// compare on free; a multiply on each over a parent that does not seal, and a mincore call
// on the free of a zeroed object of kLazyFrom bytes or more left without a canary.
#pragma once
#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "strata/concepts.hpp"
#include "strata/detail/align.hpp"
#include "strata/hardening/concepts.hpp"
#include "strata/hardening/corruption.hpp"
#include "strata/hardening/secret.hpp"
#include "strata/platform/memory.hpp"
#include "strata/platform/page.hpp"

namespace strata {

struct CanaryOptions {
  bool enabled = true;
};

template <ExactSizedHeap Super>
class CanaryHeap : public Super {
 public:
  static constexpr std::size_t CanaryBytes = 8;
  // Objects of this size and more may carry an all-zero canary (mallocZeroed's).
  static constexpr std::size_t kLazyFrom = 4096;
  static constexpr bool ExactSize = true;

  CanaryHeap() noexcept : key_(detail::freshSecret()) {}
  template <class... A>
  explicit CanaryHeap(const CanaryOptions& o, A&&... a) noexcept
      : Super(static_cast<A&&>(a)...), key_(detail::freshSecret()), bytes_(o.enabled ? CanaryBytes : 0) {}

  bool canaries() const noexcept { return bytes_ != 0; }

  void* malloc(std::size_t n) noexcept {
    std::size_t total;
    if (!detail::checked_add(n, bytes_, total)) return tooLarge();
    return place(Super::malloc(total), n);
  }

  // n bytes that read as zero. From kLazyFrom bytes the canary is left unwritten (zero, as
  // the rest) where the object may lie on pages never written (all of them, over a parent
  // that cannot say which: not a LazyZeroingHeap): writing it would make the object's last
  // page resident, which a sparse calloc never touches.
  void* mallocZeroed(std::size_t n) noexcept
    requires ZeroingHeap<Super>
  {
    std::size_t total;
    if (!detail::checked_add(n, bytes_, total)) return tooLarge();
    bool lazy;
    void* p = mallocZeroedSaying(static_cast<Super&>(*this), total, lazy);
    return n >= kLazyFrom && lazy ? p : place(p, n);
  }

  void* memalign(std::size_t align, std::size_t n) noexcept
    requires requires(Super& s) { s.memalign(align, n); }
  {
    std::size_t total;
    if (!detail::checked_add(n, bytes_, total)) return tooLarge();
    return place(Super::memalign(align, total), n);
  }

  // Checks the canary, then frees (over a parent with freeInspected, its header is checked
  // once for both).
  void free(void* p) noexcept {
    if (p == nullptr) return;
    if (bytes_ == 0) return Super::free(p);
    if constexpr (requires(Super& s) { s.freeInspected(p, [](std::size_t, bool) {}); }) {
      Super::freeInspected(p, [this, p](std::size_t size, bool lazy) {
        if (lazy && size >= kLazyFrom + CanaryBytes) [[unlikely]] return checkUnwritten(p, size);
        checkSealed(p, size);
      });
    } else {
      check(p);
      Super::free(p);
    }
  }

  // The size p was asked for.
  std::size_t getSize(void* p) noexcept {
    const std::size_t s = Super::getSize(p);
    return s >= bytes_ ? s - bytes_ : 0;
  }

  // p resized where it is (its canary checked, then moved to the new end), or nullptr with
  // p untouched.
  void* reallocInPlace(void* p, std::size_t n) noexcept
    requires ResizesInPlace<Super>
  {
    if (bytes_ != 0) check(p);
    std::size_t total;
    if (!detail::checked_add(n, bytes_, total)) return nullptr;
    return place(Super::reallocInPlace(p, total), n);
  }

  void* reallocMoving(void* p, std::size_t n) noexcept
    requires MovingHeap<Super>
  {
    if (bytes_ != 0) check(p);
    std::size_t total;
    if (!detail::checked_add(n, bytes_, total)) return nullptr;
    return place(Super::reallocMoving(p, total), n);
  }

 private:
  static void* tooLarge() noexcept {
    errno = ENOMEM;
    return nullptr;
  }

  // p's canary: its seal over a SealingHeap parent (read while p's header is known good),
  // else a keyed tag of its address; the first byte zero.
  std::uint64_t canaryOf(const void* p) const noexcept {
    if constexpr (SealingHeap<Super>) {
      return (Super::objectSeal(p) ^ key_) & ~std::uint64_t{0xff};
    } else {
      return detail::tag64(key_, reinterpret_cast<std::uintptr_t>(p)) & ~std::uint64_t{0xff};
    }
  }

  // Writes p's canary after its n bytes; p itself (nullptr stays nullptr).
  void* place(void* p, std::size_t n) noexcept {
    if (p == nullptr || bytes_ == 0) return p;
    const std::uint64_t c = canaryOf(p);
    // __builtin_memcpy: one unaligned store even where the library is built -fno-builtin.
    __builtin_memcpy(static_cast<std::byte*>(p) + n, &c, CanaryBytes);
    return p;
  }

  // Whether the canary's bytes at `at` lie on resident pages (true when the system cannot say).
  static bool residentAt(const std::byte* at) noexcept {
    const std::uintptr_t first = platform::pageAlignDown(reinterpret_cast<std::uintptr_t>(at));
    const std::uintptr_t last = platform::pageAlignDown(reinterpret_cast<std::uintptr_t>(at) + CanaryBytes - 1);
    unsigned char in[2] = {1, 1};
    if (!platform::residentPages(reinterpret_cast<const void*>(first), last - first + 1, in))
      return true;
    return (in[0] & 1) != 0 && (last == first || (in[1] & 1) != 0);
  }

  // The canary of an object left without one: read only when the page it lies on is
  // resident (on a page nothing wrote to, no overflow reached it), and zero passes.
  [[gnu::noinline]] void checkUnwritten(void* p, std::size_t s) noexcept {
    if (residentAt(static_cast<std::byte*>(p) + s - CanaryBytes)) checkAt(p, s, true);
  }

  // Reports an overwritten canary at its first damaged byte. An all-zero one passes only
  // where p may have been left without one: from kLazyFrom bytes, and over a parent that
  // records which objects those are (getSizeLazy: CheckedHeaderHeap), only for those.
  void check(void* p) noexcept {
    bool lazy = true;
    std::size_t s;
    if constexpr (requires(Super& h) { h.getSizeLazy(p, lazy); }) {
      s = Super::getSizeLazy(p, lazy);
    } else {
      s = Super::getSize(p);
    }
    checkAt(p, s, lazy && s >= kLazyFrom + CanaryBytes);
  }

  // The canary of p, whose size s the parent vouched for (its header was checked): every
  // object this layer made holds its canary, so s is at least CanaryBytes.
  void checkSealed(void* p, std::size_t s) noexcept {
    std::uint64_t have;
    __builtin_memcpy(&have, static_cast<std::byte*>(p) + s - CanaryBytes, CanaryBytes);
    if (have != canaryOf(p)) [[unlikely]] reportDamaged(p, s);
  }

  // The same, given the parent's size of p; zeroOk: p may have been left without a canary.
  void checkAt(void* p, std::size_t s, bool zeroOk) noexcept {
    const std::uint64_t want = canaryOf(p);
    std::uint64_t have;
    auto* at = static_cast<std::byte*>(p) + (s >= CanaryBytes ? s - CanaryBytes : 0);
    __builtin_memcpy(&have, at, CanaryBytes);
    if (have == want && s >= CanaryBytes) [[likely]] return;
    if (have == 0 && zeroOk) return;  // a zeroed object's unwritten canary
    reportDamaged(p, s);
  }

  // Reports p's canary, known to be damaged, at its first damaged byte (out of line and not
  // returning, so the checks above save no registers for it).
  [[gnu::cold, gnu::noinline, noreturn]] void reportDamaged(void* p, std::size_t s) noexcept {
    auto* at = static_cast<std::byte*>(p) + (s >= CanaryBytes ? s - CanaryBytes : 0);
    std::uint64_t have;
    __builtin_memcpy(&have, at, CanaryBytes);
    const std::uint64_t diff = have ^ canaryOf(p);
    const int first = diff != 0 ? __builtin_ctzll(diff) / 8 : 0;  // little-endian byte order
    reportHeapCorruption(HeapCorruption::Overflow, at + first);
  }

  std::uint64_t key_;
  std::size_t bytes_ = CanaryBytes;  // 0 when turned off
};

}  // namespace strata
