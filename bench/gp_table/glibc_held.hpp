// gp_table's view of glibc malloc (gp_table.cpp): glibc as a heap, and what it holds from
// the system, which it cannot report exactly: mallinfo2() sampled during an extra, untimed
// replay. Included once, by gp_table.cpp.
#pragma once
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "../workloads.hpp"

namespace gp {

// glibc malloc as a heap, so one replay loop serves every allocator.
struct GlibcMalloc {
  void* malloc(std::size_t n) noexcept { return std::malloc(n); }
  void free(void* p) noexcept { std::free(p); }
};

// What glibc holds from the system (sbrk'd arena + mmapped blocks) and what of it is in use,
// from mallinfo2(); zero where glibc is too old to have it.
struct GlibcInfo {
  std::size_t held = 0;
  std::size_t inUse = 0;
};

GlibcInfo glibcInfo() noexcept {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 mi = ::mallinfo2();
  return {mi.arena + mi.hblkhd, mi.uordblks + mi.hblkhd};
#else
  return {};
#endif
}

// The replay loop for glibc once more, untimed, sampling mallinfo2(): the closest glibc
// comes to saying what it holds. mallinfo2 walks glibc's free lists (up to milliseconds),
// so it is sampled every `every` ops and whenever the program break has grown past its
// highest point so far (sbrk(0) is a cheap read; the arena grows only there). The peak is
// counted from what was in use before the run, so free space glibc already had counts as
// held by this run, as it would for a fresh heap. A peak between samples can be missed.
std::size_t replaySampling(const strata::bench::Op* ops, std::size_t n, void** slots, std::size_t every) {
  GlibcMalloc heap;
  const std::size_t base = glibcInfo().inUse;
  std::size_t peak = glibcInfo().held;
  const char* highestBreak = static_cast<const char*>(::sbrk(0));
  for (std::size_t i = 0; i < n; ++i) {
    const strata::bench::Op op = ops[i];
    if (op.size != 0) {
      void* p = heap.malloc(op.size);
      slots[op.slot] = p;
      if (p != nullptr) std::memset(p, 1, op.size);
    } else {
      heap.free(slots[op.slot]);
    }
    const char* brk = static_cast<const char*>(::sbrk(0));
    if (i % every == 0 || brk > highestBreak) {
      highestBreak = std::max(highestBreak, brk);
      peak = std::max(peak, glibcInfo().held);
    }
  }
  return peak > base ? peak - base : 0;
}

}  // namespace gp
