// Built against an installed Strata (find_package and pkg-config): composes a heap, uses it,
// and exits non-zero if anything is off.
#include <cstring>

#include "strata/general/kingsley_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/utility/ansi_wrapper.hpp"

int main() {
  strata::ANSIWrapper<strata::KingsleyHeap<strata::SbrkHeap<>>> heap;
  char* p = static_cast<char*>(heap.malloc(100));
  if (p == nullptr) return 1;
  std::strcpy(p, "strata");
  const bool ok = heap.getSize(p) == 128 && std::strcmp(p, "strata") == 0;
  heap.free(p);
  return ok ? 0 : 2;
}
