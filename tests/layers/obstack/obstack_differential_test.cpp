// <strata/obstack.h> against glibc's <obstack.h>: the same seeded sequences of grow, 1grow,
// blank (also negative), make_room + 1grow_fast, int/ptr grow, finish, alloc, copy, copy0 and
// free-to-mark run on each (driver.c, compiled once per implementation), and the logs of
// finished objects' sizes and contents, frees, and live objects must be identical.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>

extern "C" {
using EmitFn = void (*)(void*, const void*, std::size_t);
int run_glibc(unsigned seed, int ops, EmitFn emit, void* ctx);
int run_strata(unsigned seed, int ops, EmitFn emit, void* ctx);
}

namespace {

void append(void* ctx, const void* data, std::size_t n) {
  static_cast<std::string*>(ctx)->append(static_cast<const char*>(data), n);
}

// The position and the record tag where two logs first differ, for the failure message.
std::string firstDifference(const std::string& a, const std::string& b) {
  std::size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return "logs differ at byte " + std::to_string(i) + " of " + std::to_string(a.size()) +
         " / " + std::to_string(b.size());
}

void compareSeeds(unsigned from, unsigned to, int ops) {
  for (unsigned seed = from; seed < to; ++seed) {
    std::string glibc, strata;
    ASSERT_EQ(run_glibc(seed, ops, append, &glibc), 1);
    ASSERT_EQ(run_strata(seed, ops, append, &strata), 1);
    ASSERT_GT(glibc.size(), static_cast<std::size_t>(ops)) << "seed " << seed;
    ASSERT_TRUE(glibc == strata) << "seed " << seed << ": " << firstDifference(glibc, strata);
  }
}

}  // namespace

// Seeds cycle through four set-ups: obstack_init; obstack_begin with 200-byte chunks;
// alignment mask 0 (packed objects); 64 KiB chunks set through obstack_chunk_size.
TEST(ObstackDifferential, ShortSequencesManySeeds) { compareSeeds(0, 400, 500); }

TEST(ObstackDifferential, LongSequences) { compareSeeds(1000, 1016, 20000); }

// A check that the comparison can fail: different seeds give different logs.
TEST(ObstackDifferential, LogsDependOnTheSequence) {
  std::string a, b;
  run_strata(1, 500, append, &a);
  run_strata(5, 500, append, &b);
  EXPECT_NE(a, b);
}
