// StlAllocator hands a container memory aligned only as well as the heap promises. A type
// aligned to 64 bytes over a 16-byte-aligned heap is refused when the container allocates,
// naming the HeapAlignsFor check; a type the heap can align is the right composition.
// expect: static assertion failed: StlAllocator: HeapAlignsFor<T, H>: the heap's Alignment is
// expect:  below alignof\(T\)
// expect: |static_assert failed .StlAllocator: HeapAlignsFor<T, H>: the heap's Alignment is
// expect:  below alignof\(T\)
#include <vector>

#include "strata/general/kingsley_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/utility/stl_allocator.hpp"

#ifdef STRATA_CONTROL
struct alignas(16) Item {
  char bytes[64];
};
#else
struct alignas(64) Item {
  char bytes[64];
};
#endif

using Heap16 = strata::KingsleyHeap<strata::SbrkHeap<>>;
static_assert(Heap16::Alignment == 16);

int main() {
  Heap16 heap;
  std::vector<Item, strata::StlAllocator<Item, Heap16>> items(heap);
  items.push_back(Item{});
  return 0;
}
