// strata_fast_path: StrataHeap's malloc/free fast paths, for instruction counts under
// callgrind (bench/strata_fast_path.sh counts the two loops with --toggle-collect):
//   pairs   malloc then free of the same block, 32 sizes from 16 to 512 bytes;
//   batch   64 mallocs of mixed sizes, then their 64 frees.
// Both run after a warm-up that gives every class its page, so every call takes the fast
// path; a loop's count over its number of pairs is the cost of one malloc plus one free
// (plus a few loop instructions). Prints "ok"; timing is not its point.
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "strata/general/strata_heap.hpp"

namespace {

using Heap = strata::StrataHeap;
void* slots[64];

__attribute__((noinline)) void run_pairs(Heap& h, int n) {
  for (int i = 0; i < n; ++i) {
    void* p = h.malloc(16 + static_cast<std::size_t>(i & 31) * 16);
    h.free(p);
  }
}

__attribute__((noinline)) void run_batch(Heap& h, int n) {
  for (int r = 0; r < n / 64; ++r) {
    for (int i = 0; i < 64; ++i) slots[i] = h.malloc(16 + static_cast<std::size_t>((i * 7 + r) & 63) * 16);
    for (int i = 0; i < 64; ++i) h.free(slots[i]);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 200'000;
  if (n <= 0) {
    std::fprintf(stderr, "usage: strata_fast_path [PAIRS]\n");
    return 2;
  }
  auto heap = std::make_unique<Heap>();
  run_batch(*heap, 6400);  // warm-up: every class has its current page
  run_pairs(*heap, n);
  run_batch(*heap, n);
  std::printf("ok\n");
  return 0;
}
