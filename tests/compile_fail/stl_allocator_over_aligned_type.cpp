// StlAllocator hands a container memory aligned only as well as the heap promises. A type
// aligned to 64 bytes over a 16-byte-aligned heap is refused when the container allocates,
// naming the HeapAlignsFor constraint; a type the heap can align is the right composition.
// expect: candidate: [^A-Za-z ]+T\* strata::StlAllocator<T, H>::allocate\(std::size_t\) requires
// expect:  +HeapAlignsFor<T, H> .with T = Item.*note: constraints not satisfied
// expect: |invalid reference to function .allocate.: constraints not satisfied.*because
// expect:  .HeapAlignsFor<Item, strata::KingsleyHeap<.* evaluated to false
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
