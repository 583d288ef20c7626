// ANSIWrapper's realloc must know how big the old object is, so its parent must be a
// SizedHeap. A FreelistHeap over a bare SbrkHeap keeps no sizes: the composition is
// rejected at the ANSIWrapper line, naming SizedHeap; a Kingsley heap (size-segregated
// freelists over SizeHeap) is the right composition.
// expect: SizedHeap
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
