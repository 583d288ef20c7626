// ANSIWrapper promises malloc's alignment; over an 8-byte-aligned heap it must not compile.
// expect: static assertion failed: ANSIWrapper: malloc must align to max_align_t
// expect: |static_assert failed due to requirement '[^']*' .ANSIWrapper: malloc must align to
// expect:  max_align_t
#include <cstddef>

#include "strata/representation/size_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/utility/ansi_wrapper.hpp"

#ifdef STRATA_CONTROL
using Parent = strata::MallocHeap;
#else
struct EightAligned : strata::MallocHeap {
  static constexpr std::size_t Alignment = 8;
};
using Parent = EightAligned;
#endif

int main() {
  strata::ANSIWrapper<strata::SizeHeap<Parent>> heap;
  heap.free(heap.malloc(16));
  return 0;
}
