// ANSIWrapper's realloc must know how big the old object is, so its parent must be a
// SizedHeap. A FreelistHeap over a bare SbrkHeap keeps no sizes: the composition is
// rejected at the ANSIWrapper line, naming SizedHeap; a Kingsley heap (size-segregated
// freelists over SizeHeap) is the right composition.
// expect: [ (]SizedHeap<Super>\)? class strata::ANSIWrapper[^A-Za-z].*satisfaction of
// expect:  [^A-Za-z ]+SizedHeap<Super>[^A-Za-z ]+ .with Super = strata::FreelistHeap<
// expect: |constraints not satisfied for class template .ANSIWrapper. .with Super =
// expect:  strata::FreelistHeap<.*does not satisfy .SizedHeap.
#include "strata/building/freelist_heap.hpp"
#include "strata/general/kingsley_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/utility/ansi_wrapper.hpp"

#ifdef STRATA_CONTROL
using Parent = strata::KingsleyHeap<strata::SbrkHeap<>>;
#else
using Parent = strata::FreelistHeap<strata::SbrkHeap<>>;
#endif

int main() {
  strata::ANSIWrapper<Parent> heap;
  heap.free(heap.realloc(heap.malloc(16), 100));
  return 0;
}
