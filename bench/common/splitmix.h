/* splitmix64 for the benchmark programs (bench/dropin and bench/fidelity in C, and
 * preload_workload): tiny, fast, and the same sequence on every machine, so every allocator
 * sees the same requests. */
#ifndef STRATA_BENCH_SPLITMIX_H
#define STRATA_BENCH_SPLITMIX_H

#include <stdint.h>

/* The next value of the generator whose state is *state. */
static inline uint64_t splitmix_next(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* A value in [lo, hi]. */
static inline uint64_t splitmix_range(uint64_t* state, uint64_t lo, uint64_t hi) {
  return lo + splitmix_next(state) % (hi - lo + 1);
}

#endif
