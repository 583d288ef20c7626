// libstrata-secure.so: malloc over strata::StrataSecureHeap (StrataHeap under the hardening
// layers, strata/general/strata_secure_heap.hpp), its options and StrataHeap's tunables read
// from the STRATA_* environment variables when the heap is built. At exit, every object still
// in the quarantine is checked once more, so a write after free is reported even when the
// object never left it.
#include "strata/general/strata_secure_heap.hpp"
#include "strata/shim/malloc_shim.hpp"

namespace {
class EnvironmentSecureHeap : public strata::StrataSecureHeap {
 public:
  EnvironmentSecureHeap() noexcept
      : StrataSecureHeap(strata::secureOptionsFromEnvironment(), strata::tunablesFromEnvironment()) {}
};

using SecureShim = strata::MallocShim<EnvironmentSecureHeap>;

[[gnu::destructor]] void checkQuarantineAtExit() noexcept { SecureShim::heap().checkAll(); }
}  // namespace

STRATA_DEFINE_MALLOC(SecureShim);
