// The random numbers of the malloc test programs (stress.cpp, fork_threads.cpp): xorshift64*,
// a few instructions per number, plenty for choosing sizes and actions. Header-only and
// libc-free, so the programs stay linked against libc alone.
#pragma once
#include <cstdint>

namespace strata_malloc_test {

struct Rng {
  std::uint64_t s;
  explicit Rng(std::uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull) {
    if (s == 0) s = 1;
  }
  std::uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1Dull;
  }
  // A number in [0, n), n > 0.
  std::uint64_t below(std::uint64_t n) { return next() % n; }
};

}  // namespace strata_malloc_test
