// StrataSecureHeap: StrataHeap with the hardening layers over it, the heap behind
// libstrata-secure.so (layers/malloc/strata_secure.cpp). Top to bottom:
//
//   CanaryHeap          8 canary bytes after each object, checked on free and realloc
//   CheckedHeaderHeap   a sealed 16-byte header: double, invalid and foreign frees
//   QuarantineHeap      freed objects wait zeroed; a changed byte is a write after free
//   StrataHeap          the allocator itself (strata/general/strata_heap.hpp)
//
// Every detected misuse prints one line and aborts (strata/hardening/corruption.hpp).
// docs/layers/hardening.md holds the threat model: what each layer stops, what it only makes
// harder, and what none of them addresses. The run-time options are StrataSecureOptions
// (libstrata-secure.so reads them, and StrataTunables, from STRATA_* variables).
#pragma once
#include "strata/general/strata_heap.hpp"
#include "strata/hardening/canary_heap.hpp"
#include "strata/hardening/checked_header_heap.hpp"
#include "strata/hardening/quarantine_heap.hpp"
#include "strata/strata_heap/strata_tunables.hpp"

namespace strata {

struct StrataSecureOptions {
  CanaryOptions canary;
  QuarantineOptions quarantine;
};

// The hardening stack over any heap Base that the header layer can sit on.
template <class Base>
using StrataSecureHeapOf = CanaryHeap<CheckedHeaderHeap<QuarantineHeap<Base, 16>>>;

class StrataSecureHeap : public StrataSecureHeapOf<StrataHeap> {
 public:
  explicit StrataSecureHeap(const StrataSecureOptions& o = {}, const StrataTunables& t = {}) noexcept
      : StrataSecureHeapOf<StrataHeap>(o.canary, o.quarantine, t) {}
};

static_assert(CheckedHeaderHeap<QuarantineHeap<StrataHeap, 16>>::HeaderSize == 16,
              "the quarantine keeps exactly the header's bytes");

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
