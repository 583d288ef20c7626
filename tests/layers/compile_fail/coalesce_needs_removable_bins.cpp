// CoalesceHeap takes a free neighbour out of its bin before merging with it, so the bins
// must offer remove(p). SLList stores cannot (a singly linked list cannot unlink a node in
// the middle), so a SegHeap of SLList bins is rejected at the CoalesceHeap line, naming the
// CoalescingStore concept; DLList bins are the right composition.
// expect: [ (]CoalescingStore<Super>\)? class strata::CoalesceHeap[^A-Za-z].*satisfaction of
// expect:  [^A-Za-z ]+CoalescingStore<Super>[^A-Za-z ]+ .with Super = strata::SegHeap<64,
// expect:  strata::LeaClasses, strata::SLListHeap,
// expect: |constraints not satisfied for class template .CoalesceHeap. .with Super =
// expect:  strata::SegHeap<64, strata::LeaClasses, strata::SLListHeap,.*does not satisfy
// expect:  .CoalescingStore.
#include "strata/building/adapt_heap.hpp"
#include "strata/building/coalesce_heap.hpp"
#include "strata/combining/seg_heap.hpp"
#include "strata/representation/coalesceable_heap.hpp"
#include "strata/top/sbrk_heap.hpp"

using Blocks = strata::CoalesceableHeap<strata::SbrkHeap<>>;
#ifdef STRATA_CONTROL
using Store = strata::SegHeap<64, strata::LeaClasses, strata::DLListHeap, Blocks>;
#else
using Store = strata::SegHeap<64, strata::LeaClasses, strata::SLListHeap, Blocks>;
#endif

int main() {
  strata::CoalesceHeap<Store> heap;
  heap.free(heap.malloc(100));
  return 0;
}
