// DelayedPurge: when an owner's released memory goes back to the system (the purge policy),
// over SegmentSlots.
//
// A heap keeps up to tunables().dirtySlots plus 1/8 of its used slots released but committed
// for good. Beyond that allowance: a wholly empty segment goes to the shared segment cache
// at once (any thread can reuse it, warm); other released slots are decommitted lazily
// (MADV_FREE) once tunables().purgeDelayMs have passed since their segment's first release
// (jemalloc's dirty decay, mimalloc's purge delay), so a program whose live size shrinks and
// grows again within the delay reuses its memory with no system calls or page faults. A heap
// holding more than maxDelayedBytes released purges it all at once. The delay is checked on
// the owner's slow paths (a refill, a page release) and, for owners that went quiet, by any
// other thread's sweep (purgeIfDue, under the owner's lock); never on the fast paths.
//
// Cost within the allowance: one compare; beyond it, a coarse clock read until something is
// due, then one walk over the owner's segments.
#pragma once
#include <concepts>
#include <cstddef>
#include <cstdint>

#include "strata/platform/memory.hpp"
#include "strata/strata_heap/accounted_segments.hpp"

namespace strata {

// What DelayedPurge needs of its parent: SegmentSlots' release and decommit calls, and a
// source with the tunables and the clock.
template <class S>
concept PurgeableSlots = requires(S& s, typename S::PageType* page, typename S::Segment* seg,
                                  std::uint64_t t, std::size_t n) {
  { s.releaseSlots(page, t) } -> std::same_as<typename S::Segment*>;
  { S::isEmpty(seg) } -> std::same_as<bool>;
  s.giveAway(seg);
  { s.decommitDirty(platform::Decommit::Lazy, t) } -> std::same_as<std::uint64_t>;
  s.decommitDown(n, platform::Decommit::Now);
  { s.dirtySlots() } -> std::same_as<std::size_t>;
  { s.usedSlots() } -> std::same_as<std::size_t>;
  { s.source().tunables().purgeDelayMs } -> std::convertible_to<std::uint64_t>;
  { s.source().nowMs() } -> std::same_as<std::uint64_t>;
};

template <PurgeableSlots Super>
class DelayedPurge : public Super {
 public:
  using Super::Super;
  using Page = typename Super::PageType;

  // A page's slots go back to their segment; beyond the allowance an empty segment goes to
  // the shared cache and, once due, older released memory is decommitted.
  void releasePage(Page* page) noexcept {
    const std::uint64_t now = Super::source().nowMs();
    auto* seg = Super::releaseSlots(page, now);
    if (due_ == kNever) due_ = now + delay();
    if (!overAllowance()) return;
    if (Super::isEmpty(seg)) Super::giveAway(seg);
    maybePurge(now);
  }

  // The owner's slow paths: purges what is due (or everything beyond the hard cap).
  void maybePurge(std::uint64_t now = 0) noexcept {
    if (!overAllowance()) return;
    if (Super::dirtySlots() * Super::SlotSize > tunables().maxDelayedBytes) {
      purgeAll(platform::Decommit::Lazy);
      return;
    }
    if (now == 0) now = Super::source().nowMs();
    if (now >= due_) purgeOlderThan(now);
  }

  // Another thread's sweep, under this owner's lock: the same as the owner would do.
  void purgeIfDue(std::uint64_t now) noexcept {
    if (overAllowance() && now >= due_) purgeOlderThan(now);
  }

  // Whether the heap holds more released memory than it keeps for good.
  bool overAllowance() const noexcept { return Super::dirtySlots() > allowance(); }

  // Everything released goes back (malloc_trim, an orphan nobody adopted): Now drops the
  // resident size.
  void purgeAll(platform::Decommit how) noexcept {
    Super::decommitDirty(how, kNever);
    due_ = kNever;
  }

 private:
  static constexpr std::uint64_t kNever = ~std::uint64_t{0};

  const StrataTunables& tunables() const noexcept { return Super::source().tunables(); }
  std::uint64_t delay() const noexcept { return tunables().purgeDelayMs; }

  std::size_t allowance() const noexcept { return tunables().dirtySlots + Super::usedSlots() / 8; }

  void purgeOlderThan(std::uint64_t now) noexcept {
    const std::uint64_t oldest = Super::decommitDirty(platform::Decommit::Lazy, now - (now < delay() ? now : delay()));
    due_ = oldest == kNever ? kNever : oldest + delay();
  }

  std::uint64_t due_ = kNever;  // nothing released is due before this (ms)
};

}  // namespace strata
