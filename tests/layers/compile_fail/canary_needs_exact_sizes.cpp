// CanaryHeap puts its canary right after the size asked for, so its parent's getSize must be
// exactly that size: over MallocHeap (malloc_usable_size rounds up) the composition is
// rejected, naming ExactSizedHeap.
// expect: ExactSizedHeap<Super>\)? class strata::CanaryHeap[^A-Za-z].*
// expect: with Super = strata::MallocHeap
// expect: |constraints not satisfied for class template .CanaryHeap. .with Super =
// expect:  strata::MallocHeap..*.strata::MallocHeap. does not satisfy .ExactSizedHeap.
#include "strata/hardening/canary_heap.hpp"
#include "strata/hardening/checked_header_heap.hpp"
#include "strata/top/malloc_heap.hpp"

#ifdef STRATA_CONTROL
using Parent = strata::CheckedHeaderHeap<strata::MallocHeap>;
#else
using Parent = strata::MallocHeap;
#endif

int main() {
  strata::CanaryHeap<Parent> heap;
  heap.free(heap.malloc(24));
  return 0;
}
