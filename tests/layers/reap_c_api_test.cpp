// links: strata_reap
#include "strata/reap.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "strata/detail/poison.hpp"
#include "strata/top/memory_account.hpp"

TEST(ReapCApi, MallocFreeReuse) {
  strata_reap* r = reap_create(nullptr);
  ASSERT_NE(r, nullptr);
  void* a = reap_malloc(r, 100);
  void* b = reap_malloc(r, 100);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 16, 0u);
  EXPECT_GE(reap_size(r, a), 100u);
  reap_free(r, a);
  EXPECT_EQ(reap_size(r, a), 0u) << "a freed object is not live";
  EXPECT_EQ(reap_malloc(r, 100), a) << "a freed object serves the next request of its size";
  void* z = reap_malloc(r, 0);
  EXPECT_NE(z, nullptr);
  reap_destroy(r);
}

TEST(ReapCApi, CallocZeroesAndChecksOverflow) {
  strata_reap* r = reap_create(nullptr);
  auto* p = static_cast<unsigned char*>(reap_malloc(r, 256));
  std::memset(p, 0xAB, 256);
  reap_free(r, p);
  auto* q = static_cast<unsigned char*>(reap_calloc(r, 16, 16));
  ASSERT_NE(q, nullptr);
  for (int i = 0; i < 256; ++i) ASSERT_EQ(q[i], 0) << i;
  errno = 0;
  EXPECT_EQ(reap_calloc(r, SIZE_MAX / 2, 3), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(reap_realloc(r, q, SIZE_MAX), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_GE(reap_size(r, q), 256u) << "a failed realloc leaves the object alone";
  errno = 0;
  EXPECT_EQ(reap_malloc(r, SIZE_MAX - 7), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  reap_destroy(r);
}

TEST(ReapCApi, Realloc) {
  strata_reap* r = reap_create(nullptr);
  auto* p = static_cast<char*>(reap_realloc(r, nullptr, 6));
  std::memcpy(p, "hello", 6);
  p = static_cast<char*>(reap_realloc(r, p, 100000));
  ASSERT_NE(p, nullptr);
  EXPECT_STREQ(p, "hello");
  EXPECT_EQ(reap_realloc(r, p, 0), nullptr);
  EXPECT_EQ(reap_size(r, p), 0u);
  reap_destroy(r);
}

TEST(ReapCApi, BadInputLeavesTheReapIntact) {
  reap_destroy(nullptr);
  reap_clear(nullptr);
  strata_reap* r = reap_create(nullptr);
  strata_reap* other = reap_create(nullptr);
  reap_free(r, nullptr);
  std::vector<char*> live;
  for (int i = 0; i < 200; ++i) {
    auto* p = static_cast<char*>(reap_malloc(r, 48));
    std::memset(p, i, 48);
    live.push_back(p);
  }
  void* foreign = reap_malloc(other, 48);
  alignas(16) static char stat[64];
  reap_free(r, live[10]);
  reap_free(r, live[10]);  // double free: ignored
  reap_free(r, live[11] + 16);  // interior pointer
  reap_free(r, live[12] + 3);   // misaligned
  reap_free(r, foreign);        // another reap's object
  reap_free(r, stat + 16);      // not from any reap
  errno = 0;
  EXPECT_EQ(reap_realloc(r, live[10], 10), nullptr);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(reap_realloc(r, foreign, 10), nullptr);
  EXPECT_EQ(reap_size(r, foreign), 0u);
  EXPECT_EQ(reap_size(other, foreign), 56u);
  // Nothing was corrupted: all the others keep their contents, and new objects do not overlap.
  std::vector<char*> fresh;
  for (int i = 0; i < 50; ++i) {
    auto* p = static_cast<char*>(reap_malloc(r, 48));
    std::memset(p, 0x7F, 48);
    fresh.push_back(p);
  }
  for (int i = 0; i < 200; ++i) {
    if (i == 10) continue;
    for (int k = 0; k < 48; ++k) ASSERT_EQ(live[i][k], static_cast<char>(i)) << i;
  }
  int reused = 0;
  for (char* p : fresh) reused += p == live[10];
  EXPECT_EQ(reused, 1) << "the double-freed object is handed out once";
  reap_destroy(other);
  reap_destroy(r);
}

namespace {
std::vector<int> order;
void note(void* arg) { order.push_back(static_cast<int>(reinterpret_cast<std::intptr_t>(arg))); }
}  // namespace

TEST(ReapCApi, NestingCleanupsAndDestroyReturnEveryByte) {
  const std::size_t before = strata::processAccount().held();
  order.clear();
  strata_reap* root = reap_create(nullptr);
  strata_reap* child = reap_create(root);
  strata_reap* grandchild = reap_create(child);
  ASSERT_TRUE(root && child && grandchild);
  EXPECT_EQ(reap_cleanup_register(root, note, reinterpret_cast<void*>(1)), 0);
  EXPECT_EQ(reap_cleanup_register(child, note, reinterpret_cast<void*>(2)), 0);
  EXPECT_EQ(reap_cleanup_register(grandchild, note, reinterpret_cast<void*>(3)), 0);
  EXPECT_EQ(reap_cleanup_register(root, note, reinterpret_cast<void*>(4)), 0);
  for (strata_reap* r : {root, child, grandchild}) {
    for (int i = 0; i < 3000; ++i) ASSERT_NE(reap_malloc(r, static_cast<size_t>(i % 500)), nullptr);
  }
  EXPECT_GT(strata::processAccount().held(), before + 3 * 3000 * 200)
      << "the library charges the same process account the test reads";
  reap_clear(root);  // children first (grandchild, child), then root's cleanups newest first
  EXPECT_EQ(order, (std::vector<int>{3, 2, 4, 1}));
  strata_reap* again = reap_create(root);
  reap_cleanup_register(again, note, reinterpret_cast<void*>(5));
  reap_destroy(again);
  EXPECT_EQ(order.back(), 5);
  reap_create(root);
  reap_destroy(root);
  EXPECT_EQ(strata::processAccount().held(), before);
}

TEST(ReapCApi, PaperInterface) {
  const std::size_t before = strata::processAccount().held();
  void* reap = nullptr;
  void* sub = nullptr;
  reapCreate(&reap, nullptr);
  ASSERT_NE(reap, nullptr);
  reapCreate(&sub, &reap);
  ASSERT_NE(sub, nullptr);
  void* p = reapMalloc(&reap, 100);
  void* q = reapMalloc(&sub, 100);
  ASSERT_TRUE(p && q);
  reapFree(&reap, p);
  EXPECT_EQ(reapMalloc(&reap, 100), p);
  reapFreeAll(&reap);  // also destroys sub
  EXPECT_NE(reapMalloc(&reap, 10), nullptr);
  reapDestroy(&reap);
  EXPECT_EQ(reap, nullptr);
  EXPECT_EQ(strata::processAccount().held(), before);
}

// Debug builds (no NDEBUG, or AddressSanitizer) report a bad free with its address.
TEST(ReapCApi, DebugBuildsReportBadFrees) {
  strata_reap* r = reap_create(nullptr);
  auto* p = static_cast<char*>(reap_malloc(r, 32));
  reap_free(r, p);
  testing::internal::CaptureStderr();
  reap_free(r, p);
  const std::string err = testing::internal::GetCapturedStderr();
#if !defined(NDEBUG) || defined(STRATA_ASAN)
  char addr[32];
  std::snprintf(addr, sizeof addr, "%p", static_cast<void*>(p));
  EXPECT_NE(err.find("strata reap: reap_free of"), std::string::npos) << err;
  EXPECT_NE(err.find(addr), std::string::npos) << err;
#else
  EXPECT_EQ(err, "");
#endif
  reap_destroy(r);
}
