// Built against an installed Strata (find_package and pkg-config): composes a heap from the
// header-only layers, uses it, and prints what failed and exits 1 if anything is off.
#include <cstdio>
#include <cstring>

#include "strata/general/kingsley_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/utility/ansi_wrapper.hpp"

int main() {
  strata::ANSIWrapper<strata::KingsleyHeap<strata::SbrkHeap<>>> heap;
  char* p = static_cast<char*>(heap.malloc(100));
  if (p == nullptr) {
    std::fprintf(stderr, "layers: malloc(100) returned null\n");
    return 1;
  }
  std::strcpy(p, "strata");
  if (heap.getSize(p) != 128 || std::strcmp(p, "strata") != 0) {
    std::fprintf(stderr, "layers: getSize %zu (expected 128), contents \"%s\"\n",
                 heap.getSize(p), p);
    return 1;
  }
  heap.free(p);
  std::puts("header-only layers: ok");
  return 0;
}
