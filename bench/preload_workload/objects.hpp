// preload_workload's objects (preload_workload.cpp): sizes drawn before the clock, objects
// filled with a tag when allocated and checked before they are freed, and how the program
// ends on a failure. Included once, by preload_workload.cpp.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../common/splitmix.h"

namespace pw {

// A small fast generator (splitmix64, bench/common/splitmix.h): deterministic per seed,
// nothing allocated.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() { return splitmix_next(&s_); }
  // Uniform in [0, n).
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
  // Log-uniform in [lo, hi].
  std::size_t logUniform(std::size_t lo, std::size_t hi) {
    const double u = static_cast<double>(next() >> 11) / 9007199254740992.0;
    const double v = std::exp(std::log(static_cast<double>(lo)) +
                              u * (std::log(static_cast<double>(hi) + 1) - std::log(lo)));
    return std::min(hi, static_cast<std::size_t>(v));
  }
  // A nonzero byte to fill an object with.
  std::uint8_t tag() { return static_cast<std::uint8_t>(1 + next() % 255); }

 private:
  std::uint64_t s_;
};

// A table of sizes drawn before the clock starts (logUniform costs an exp and a log, more
// than some of the allocations it sizes), replayed cyclically.
class Sizes {
 public:
  template <class Draw>
  Sizes(Rng& rng, Draw draw) : table_(kCount) {
    for (auto& s : table_) s = static_cast<std::uint32_t>(draw(rng));
  }
  std::size_t next() { return table_[i_++ & (kCount - 1)]; }

 private:
  static constexpr std::size_t kCount = 1 << 16;
  std::vector<std::uint32_t> table_;
  std::size_t i_ = 0;
};

// One live object: where, how big, and the byte it was filled with.
struct Object {
  unsigned char* p = nullptr;
  std::uint32_t n = 0;
  std::uint8_t tag = 0;
};

// Keeps the compiler from pairing a malloc with its free and removing both.
inline void escape(void* p) { asm volatile("" : : "r"(p) : "memory"); }

// Reports what went wrong and ends the process with `code` (no destructors, no frees).
[[noreturn]] inline void die(int code, const char* what) {
  std::fprintf(stderr, "preload_workload: %s\n", what);
  std::fflush(stderr);
  std::_Exit(code);
}

// Allocates n bytes and fills them with the tag: the bytes a program would write.
inline Object make(std::size_t n, std::uint8_t tag) {
  auto* p = static_cast<unsigned char*>(std::malloc(n));
  if (p == nullptr) die(4, "malloc returned NULL");
  escape(p);
  std::memset(p, tag, n);
  return {p, static_cast<std::uint32_t>(n), tag};
}

// Checks that every byte still holds the tag, a word at a time (the loop vectorises);
// exits with status 3 if one does not.
inline void check(const Object& o) {
  const std::uint64_t word = 0x0101010101010101ull * o.tag;
  std::uint64_t diff = 0;
  std::size_t i = 0;
  for (; i + 8 <= o.n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, o.p + i, 8);
    diff |= w ^ word;
  }
  for (; i < o.n; ++i) diff |= o.p[i] ^ o.tag;
  if (diff != 0) die(3, "an object's contents changed while it was live");
}

// What a program does with an object at the end of its life: reads it, then frees it.
inline void checkAndFree(const Object& o) {
  check(o);
  std::free(o.p);
}

}  // namespace pw
