// links: strata_region
// The region emulator (<strata/region.h>): nesting, clear, destroy, exact counts, contents
// kept until clear, every object a plain malloc block (no header), huge sizes, and — built
// with ASan — no leak after destroy; built plain, malloc's own statistics back to baseline.
#include <strata/region.h>

#include <gtest/gtest.h>
#include <malloc.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <strata/detail/poison.hpp>

#ifdef STRATA_ASAN
#include <sanitizer/lsan_interface.h>
// Huge requests that reach malloc must come back NULL rather than abort the test.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
#endif

#ifndef STRATA_ASAN
// Built plain, this test puts its own malloc into the process (as LD_PRELOAD would): it
// counts live blocks and forwards to glibc. The library's calls must land here, which shows
// the emulator really runs on whatever malloc the process has, and lets the leak check count
// blocks exactly (glibc's own statistics count its thread caches as in use).
extern "C" void* __libc_malloc(std::size_t);
extern "C" void* __libc_calloc(std::size_t, std::size_t);
extern "C" void* __libc_realloc(void*, std::size_t);
extern "C" void __libc_free(void*);

namespace {
std::atomic<long> gLiveBlocks{0};
std::atomic<long> gMallocCalls{0};
}  // namespace

extern "C" void* malloc(std::size_t n) {
  void* p = __libc_malloc(n);
  gMallocCalls.fetch_add(1, std::memory_order_relaxed);
  if (p) gLiveBlocks.fetch_add(1, std::memory_order_relaxed);
  return p;
}
extern "C" void* calloc(std::size_t c, std::size_t n) {
  void* p = __libc_calloc(c, n);
  if (p) gLiveBlocks.fetch_add(1, std::memory_order_relaxed);
  return p;
}
extern "C" void* realloc(void* old, std::size_t n) {
  void* p = __libc_realloc(old, n);
  if (!old && p) gLiveBlocks.fetch_add(1, std::memory_order_relaxed);
  if (old && !p && n == 0) gLiveBlocks.fetch_sub(1, std::memory_order_relaxed);
  return p;
}
extern "C" void free(void* p) {
  if (p) gLiveBlocks.fetch_sub(1, std::memory_order_relaxed);
  __libc_free(p);
}
#endif

namespace {

// Blocks the process's malloc holds now (the interposed count; 0 under ASan, which checks
// leaks its own way).
long liveBlocks() {
#ifdef STRATA_ASAN
  return 0;
#else
  return gLiveBlocks.load();
#endif
}

// Asserts that nothing allocated since baseline is still held: with ASan by a leak check,
// otherwise by the interposed malloc's block count.
void expectNothingLeaked(long baseline) {
#ifdef STRATA_ASAN
  (void)baseline;
  EXPECT_EQ(__lsan_do_recoverable_leak_check(), 0);
#else
  EXPECT_EQ(liveBlocks(), baseline);
#endif
}

unsigned char pattern(std::size_t object, std::size_t byte) {
  return static_cast<unsigned char>(object * 131 + byte * 7 + 1);
}

TEST(RegionEmulator, CountsAndLiveBytesAreExact) {
  strata_region* r = region_create(nullptr);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(region_object_count(r), 0u);
  EXPECT_EQ(region_live_bytes(r), 0u);
  ASSERT_NE(region_alloc(r, 10), nullptr);
  ASSERT_NE(region_alloc(r, 0), nullptr);
  ASSERT_NE(region_calloc(r, 3, 7), nullptr);
  char* s = region_strdup(r, "hello");
  ASSERT_NE(s, nullptr);
  EXPECT_STREQ(s, "hello");
  EXPECT_EQ(region_object_count(r), 4u);
  EXPECT_EQ(region_live_bytes(r), 10u + 0u + 21u + 6u);
  region_clear(r);
  EXPECT_EQ(region_object_count(r), 0u);
  EXPECT_EQ(region_live_bytes(r), 0u);
  region_destroy(r);
}

TEST(RegionEmulator, ObjectsArePlainMallocBlocksWithoutHeaders) {
  strata_region* r = region_create(nullptr);
  ASSERT_NE(r, nullptr);
  std::vector<std::pair<unsigned char*, std::size_t>> objs;
  for (std::size_t n : {1u, 8u, 16u, 24u, 100u, 4096u, 200000u}) {
    auto* p = static_cast<unsigned char*>(region_alloc(r, n));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % alignof(std::max_align_t), 0u);
    // The pointer is the start of a block the process's malloc handed out (ASan reports a
    // pointer malloc does not own), with at least n usable bytes.
    EXPECT_GE(malloc_usable_size(p), n);
    objs.emplace_back(p, n);
  }
  // Distinct objects never overlap.
  for (std::size_t i = 0; i < objs.size(); ++i)
    for (std::size_t j = i + 1; j < objs.size(); ++j)
      EXPECT_TRUE(objs[i].first + objs[i].second <= objs[j].first ||
                  objs[j].first + objs[j].second <= objs[i].first);
  void* z1 = region_alloc(r, 0);
  void* z2 = region_alloc(r, 0);
  ASSERT_NE(z1, nullptr);
  EXPECT_NE(z1, z2);
  region_destroy(r);
}

TEST(RegionEmulator, EveryByteWritableAndIntactUntilClear) {
  std::mt19937_64 rng(42);
  long baseline = liveBlocks();
  strata_region* r = region_create(nullptr);
  ASSERT_NE(r, nullptr);
  for (int round = 0; round < 3; ++round) {
    std::vector<std::pair<unsigned char*, std::size_t>> objs;
    std::size_t bytes = 0;
    for (std::size_t i = 0; i < 20000; ++i) {
      std::size_t n = (rng() % 8 == 0) ? rng() % 5000 : rng() % 64;
      auto* p = static_cast<unsigned char*>(i % 3 == 0 ? region_calloc(r, 1, n)
                                                       : region_alloc(r, n));
      ASSERT_NE(p, nullptr);
      if (i % 3 == 0) {
        for (std::size_t b = 0; b < n; ++b) ASSERT_EQ(p[b], 0) << "calloc not zeroed";
      }
      for (std::size_t b = 0; b < n; ++b) p[b] = pattern(i, b);
      objs.emplace_back(p, n);
      bytes += n;
    }
    EXPECT_EQ(region_object_count(r), objs.size());
    EXPECT_EQ(region_live_bytes(r), bytes);
    for (std::size_t i = 0; i < objs.size(); ++i)
      for (std::size_t b = 0; b < objs[i].second; ++b)
        ASSERT_EQ(objs[i].first[b], pattern(i, b)) << "object " << i << " byte " << b;
    region_clear(r);  // the region stays usable for the next round
    EXPECT_EQ(region_object_count(r), 0u);
  }
  region_destroy(r);
  expectNothingLeaked(baseline);
}

TEST(RegionEmulator, NestingAndDestroyOfParentDestroysChildren) {
  long baseline = liveBlocks();
  strata_region* root = region_create(nullptr);
  strata_region* a = region_create(root);
  strata_region* b = region_create(root);
  strata_region* a1 = region_create(a);
  strata_region* a2 = region_create(a);
  strata_region* b1 = region_create(b);
  for (strata_region* r : {root, a, b, a1, a2, b1}) {
    ASSERT_NE(r, nullptr);
    for (int i = 0; i < 100; ++i) ASSERT_NE(region_alloc(r, 48), nullptr);
  }
  // Each region counts its own objects only.
  EXPECT_EQ(region_object_count(a), 100u);
  EXPECT_EQ(region_live_bytes(a1), 4800u);
  // Destroying a child alone unlinks it; its siblings and parent carry on.
  region_destroy(a1);
  ASSERT_NE(region_alloc(a2, 5), nullptr);
  EXPECT_EQ(region_object_count(a2), 101u);
  // Clearing a parent frees its objects and destroys its children, and it stays usable.
  region_clear(b);
  EXPECT_EQ(region_object_count(b), 0u);
  strata_region* b2 = region_create(b);
  ASSERT_NE(b2, nullptr);
  ASSERT_NE(region_strdup(b2, "again"), nullptr);
  // Destroying the root takes everything with it; the leak check proves it.
  region_destroy(root);
  expectNothingLeaked(baseline);
}

TEST(RegionEmulator, DeepAndWideNestingDestroyedIteratively) {
  long baseline = liveBlocks();
  strata_region* root = region_create(nullptr);
  ASSERT_NE(root, nullptr);
  strata_region* r = root;
  for (int depth = 0; depth < 200000; ++depth) {  // deep enough to overflow a recursive walk
    r = region_create(r);
    ASSERT_NE(r, nullptr);
    if (depth % 1000 == 0) {
      ASSERT_NE(region_alloc(r, 32), nullptr);
    }
  }
  for (int i = 0; i < 1000; ++i) {
    strata_region* c = region_create(root);
    ASSERT_NE(c, nullptr);
    ASSERT_NE(region_alloc(c, 16), nullptr);
  }
  region_destroy(root);
  expectNothingLeaked(baseline);
}

TEST(RegionEmulator, HugeSizesFailWithEnomemAndLeaveRegionValid) {
  strata_region* r = region_create(nullptr);
  ASSERT_NE(r, nullptr);
  char* keep = region_strdup(r, "intact");
  ASSERT_NE(keep, nullptr);
  const std::size_t huge[] = {SIZE_MAX, SIZE_MAX - 15, SIZE_MAX / 2 + 1,
                              static_cast<std::size_t>(PTRDIFF_MAX) + 1,
                              static_cast<std::size_t>(1) << 62};
  for (std::size_t n : huge) {
    errno = 0;
    EXPECT_EQ(region_alloc(r, n), nullptr) << n;
    EXPECT_EQ(errno, ENOMEM) << n;
  }
  const std::pair<std::size_t, std::size_t> overflow[] = {
      {SIZE_MAX, 2}, {2, SIZE_MAX}, {SIZE_MAX / 16 + 1, 16}, {std::size_t{1} << 32, std::size_t{1} << 32}};
  for (auto [count, size] : overflow) {
    errno = 0;
    EXPECT_EQ(region_calloc(r, count, size), nullptr) << count << " x " << size;
    EXPECT_EQ(errno, ENOMEM);
  }
  // Failures recorded nothing; the region still works.
  EXPECT_EQ(region_object_count(r), 1u);
  EXPECT_EQ(region_live_bytes(r), 7u);
  EXPECT_STREQ(keep, "intact");
  ASSERT_NE(region_calloc(r, 0, SIZE_MAX), nullptr);
  ASSERT_NE(region_alloc(r, 64), nullptr);
  EXPECT_EQ(region_object_count(r), 3u);
  region_destroy(r);
}

#ifndef STRATA_ASAN
TEST(RegionEmulator, EveryObjectIsOneCallToTheProcessMalloc) {
  strata_region* r = region_create(nullptr);
  ASSERT_NE(r, nullptr);
  ASSERT_NE(region_alloc(r, 1), nullptr);  // the record array now has room for 16
  long calls = gMallocCalls.load();
  long blocks = liveBlocks();
  for (int i = 0; i < 10; ++i) ASSERT_NE(region_alloc(r, 100), nullptr);
  EXPECT_EQ(gMallocCalls.load() - calls, 10);
  EXPECT_EQ(liveBlocks() - blocks, 10);
  region_clear(r);  // every object back to free; only the record array stays
  EXPECT_EQ(liveBlocks(), blocks - 1);
  region_destroy(r);
}
#endif

TEST(RegionEmulator, NullArguments) {
  region_destroy(nullptr);
  region_clear(nullptr);
  EXPECT_EQ(region_object_count(nullptr), 0u);
  EXPECT_EQ(region_live_bytes(nullptr), 0u);
  errno = 0;
  EXPECT_EQ(region_alloc(nullptr, 8), nullptr);
  EXPECT_EQ(errno, EINVAL);
  strata_region* r = region_create(nullptr);
  ASSERT_NE(r, nullptr);
  errno = 0;
  EXPECT_EQ(region_strdup(r, nullptr), nullptr);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(region_object_count(r), 0u);
  region_destroy(r);
}

}  // namespace
