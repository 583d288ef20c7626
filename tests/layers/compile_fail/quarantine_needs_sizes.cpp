// QuarantineHeap zeroes and later checks a freed object's usable bytes, so its parent must
// know them: over a bare SbrkHeap (no getSize) the composition is rejected, naming SizedHeap.
// expect: SizedHeap<Super>\)? class strata::QuarantineHeap[^A-Za-z].*
// expect: with Super = strata::SbrkHeap<
// expect: |constraints not satisfied for class template .QuarantineHeap. .with Super =
// expect:  strata::SbrkHeap<.*does not satisfy .SizedHeap.
#include "strata/hardening/quarantine_heap.hpp"
#include "strata/representation/size_heap.hpp"
#include "strata/top/sbrk_heap.hpp"

#ifdef STRATA_CONTROL
using Parent = strata::SizeHeap<strata::SbrkHeap<>>;
#else
using Parent = strata::SbrkHeap<>;
#endif

int main() {
  strata::QuarantineHeap<Parent> heap;
  heap.free(heap.malloc(24));
  return 0;
}
