// StrataSecureHeap: StrataHeap with the hardening layers over it, the heap behind
// libstrata-secure.so (layers/malloc/strata_secure.cpp). Top to bottom:
//
//   CanaryHeap          8 canary bytes after each object, checked on free and realloc
//   CheckedHeaderHeap   a sealed 16-byte header: double, invalid and foreign frees
//   QuarantineHeap      freed objects wait zeroed; a changed byte is a write after free
//                       (off unless asked for: StrataSecureOptions::quarantine.bytes)
//   StrataHeap          the allocator itself (strata/general/strata_heap.hpp), its pages'
//                       free blocks keeping their links encoded and checked (EncodedLinks),
//                       right after the header, over the object's first bytes
//
// Every detected misuse prints one line and aborts (strata/hardening/corruption.hpp).
// docs/layers/hardening.md holds the threat model: what each layer stops, what it only makes
// harder, and what none of them addresses. The run-time options are StrataSecureOptions
// (libstrata-secure.so reads them, and StrataTunables, from STRATA_* variables).
#pragma once
#include "strata/general/strata_heap.hpp"
#include "strata/hardening/canary_heap.hpp"
#include "strata/hardening/checked_header_heap.hpp"
#include "strata/hardening/encoded_links.hpp"
#include "strata/hardening/quarantine_heap.hpp"
#include "strata/strata_heap/strata_tunables.hpp"

namespace strata {

struct StrataSecureOptions {
  CanaryOptions canary;
  QuarantineOptions quarantine{.bytes = 0};  // off: each write after free it catches costs time
};

// The hardening stack over any heap Base that the header layer can sit on.
template <class Base>
using StrataSecureHeapOf = CanaryHeap<CheckedHeaderHeap<QuarantineHeap<Base, 16>>>;

// The bytes the hardening stack adds to every request: the header and the canary.
inline constexpr std::size_t kStrataSecureOverhead = 16 + 8;

// StrataHeap whose pages keep their free blocks' links encoded (EncodedLinks), its medium
// tier starting that much higher: a request goes to the same tier as under StrataHeap (up to
// a class's rounding), where the header and canary would otherwise push the 89..112-byte
// requests of small-object programs from pages into the tier's slower, coalescing regions.
using EncodedLinkStrataHeapBase =
    StrataHeapOf<SegmentHeap<kStrataSegmentShift>, FineSizeClasses<kStrataClassShift>, kStrataSlotBits,
                 QueuedPageOf<EncodedLinks>, kStrataMediumFrom + kStrataSecureOverhead>;
class EncodedLinkStrataHeap : public EncodedLinkStrataHeapBase {
 public:
  explicit EncodedLinkStrataHeap(const StrataTunables& t = {}) noexcept : EncodedLinkStrataHeapBase(t) {}
};

class StrataSecureHeap : public StrataSecureHeapOf<EncodedLinkStrataHeap> {
 public:
  explicit StrataSecureHeap(const StrataSecureOptions& o = {}, const StrataTunables& t = {}) noexcept
      : StrataSecureHeapOf<EncodedLinkStrataHeap>(o.canary, o.quarantine, t) {}
};

static_assert(CheckedHeaderHeap<QuarantineHeap<EncodedLinkStrataHeap, 16>>::HeaderSize == 16,
              "the quarantine keeps exactly the header's bytes");
static_assert(kStrataSecureOverhead ==
                  CheckedHeaderHeap<EncodedLinkStrataHeap>::HeaderSize +
                      CanaryHeap<CheckedHeaderHeap<EncodedLinkStrataHeap>>::CanaryBytes,
              "the overhead the medium tier's start allows for is the header's and the canary's");
static_assert(EncodedLinks::kOffset == CheckedHeaderHeap<EncodedLinkStrataHeap>::HeaderSize,
              "a free block's link lies right after the header, over the object's first bytes");

// The defaults with the STRATA_CANARIES, STRATA_QUARANTINE and STRATA_QUARANTINE_MAX
// variables applied (docs/layers/malloc.md: "Tuning libstrata-secure.so"). A bad value prints
// one line naming the variable and keeps the default.
inline StrataSecureOptions secureOptionsFromEnvironment() noexcept {
  StrataSecureOptions o;
  std::uint64_t canaries = o.canary.enabled ? 1 : 0;
  detail::readTunable("STRATA_CANARIES", canaries, 0, 1, false, "0 or 1");
  o.canary.enabled = canaries != 0;
  detail::readTunable("STRATA_QUARANTINE", o.quarantine.bytes, 0, std::uint64_t{1} << 40, true,
                      "a size up to 1T, such as 1M; 0 turns the quarantine off");
  detail::readTunable("STRATA_QUARANTINE_MAX", o.quarantine.maxObject, 0, std::uint64_t{1} << 40,
                      true, "a size up to 1T, such as 4M");
  return o;
}

}  // namespace strata
