// CheckedHeaderHeap keeps objects 16-aligned behind a 16-byte header, so its parent must align
// to 16: over an 8-aligned heap the composition is rejected, naming SixteenAlignedHeap.
// expect: SixteenAlignedHeap<Super>\)? class strata::CheckedHeaderHeap[^A-Za-z].*
// expect: with Super = Aligned<8>
// expect: |constraints not satisfied for class template .CheckedHeaderHeap. .with Super =
// expect:  Aligned<8>..*.Aligned<8>. does not satisfy .SixteenAlignedHeap.
#include <cstddef>
#include <cstdlib>

#include "strata/hardening/checked_header_heap.hpp"

template <std::size_t A>
struct Aligned {
  static constexpr std::size_t Alignment = A;
  void* malloc(std::size_t n) { return std::malloc(n); }
  void free(void* p) { std::free(p); }
};
#ifdef STRATA_CONTROL
using Parent = Aligned<16>;
#else
using Parent = Aligned<8>;
#endif

int main() {
  strata::CheckedHeaderHeap<Parent> heap;
  heap.free(heap.malloc(24));
  return 0;
}
