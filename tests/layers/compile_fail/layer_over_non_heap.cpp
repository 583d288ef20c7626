// A layer stacked on something that is not a heap (no malloc/free/Alignment) is rejected
// with the Heap concept named.
// expect: [ (]Heap<Super>\)? class strata::FreelistHeap[^A-Za-z].*satisfaction of
// expect:  [^A-Za-z ]+Heap<Super>[^A-Za-z ]+ .with Super = NotAHeap.
// expect: |constraints not satisfied for class template .FreelistHeap. .with Super =
// expect:  NotAHeap..*.NotAHeap. does not satisfy .Heap.
#include "strata/building/freelist_heap.hpp"
#include "strata/top/malloc_heap.hpp"

struct NotAHeap {
  void* allocate(unsigned long);
};

#ifdef STRATA_CONTROL
using Parent = strata::MallocHeap;
#else
using Parent = NotAHeap;
#endif

int main() {
  strata::FreelistHeap<Parent> heap;
  heap.free(heap.malloc(16));
  return 0;
}
