// libstrata.so: malloc over strata::StrataHeap (strata/general/strata_heap.hpp), with its
// run-time policy read from the STRATA_* environment variables when the heap is built (the
// first allocation of the process; docs/layers/malloc.md: "Tuning libstrata.so").
#include "strata/general/strata_heap.hpp"
#include "strata/shim/malloc_shim.hpp"
#include "strata/strata_heap/strata_tunables.hpp"

namespace {
class EnvironmentStrataHeap : public strata::StrataHeap {
 public:
  EnvironmentStrataHeap() noexcept : StrataHeap(strata::tunablesFromEnvironment()) {}
};
}  // namespace

using StrataShim = strata::MallocShim<EnvironmentStrataHeap>;
STRATA_DEFINE_MALLOC(StrataShim);
