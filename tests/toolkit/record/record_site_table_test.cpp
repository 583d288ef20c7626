// The recorder's site table (toolkit/record/recorder/site_table.hpp) on its own: one id per distinct
// stack, defined once; stacks that differ in a frame or in depth get ids of their own, even
// when their hashes collide; an empty stack has no site; a definition that fails keeps
// nothing; the table grows and forgets on release.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <vector>

#include "record/recorder/site_table.hpp"

namespace {

using strata::record::FrameHash;
using strata::record::kSiteFrames;
using strata::record::SiteStack;
using strata::record::SiteTable;
using strata::trace::kNoSite;

SiteStack stack(std::initializer_list<std::uint64_t> frames) {
  SiteStack s;
  for (std::uint64_t f : frames) s.frames[s.depth++] = f;
  return s;
}

// A writer's defineSite, counting: ids 1, 2, ... in order.
struct Define {
  std::vector<std::vector<std::uint64_t>> defined;
  std::uint64_t operator()(const std::uint64_t* f, std::size_t n) {
    defined.emplace_back(f, f + n);
    return defined.size();
  }
};

// Every stack hashes alike: each lookup meets the others' slots first.
struct OneHash {
  std::uint64_t operator()(const std::uint64_t*, std::size_t) const { return 42; }
};

TEST(RecordSiteTable, OneIdPerStackDefinedOnce) {
  SiteTable<> t;
  ASSERT_TRUE(t.init(16));
  Define d;
  auto intern = [&](const SiteStack& s) { return t.intern(s, d); };
  const auto a = stack({0x401000, 0x402000}), b = stack({0x401000, 0x402008});
  const auto shorter = stack({0x401000});
  EXPECT_EQ(intern(a), 1u);
  EXPECT_EQ(intern(b), 2u);
  EXPECT_EQ(intern(shorter), 3u);
  EXPECT_EQ(intern(a), 1u);
  EXPECT_EQ(intern(b), 2u);
  EXPECT_EQ(intern(shorter), 3u);
  ASSERT_EQ(d.defined.size(), 3u);
  EXPECT_EQ(d.defined[1], (std::vector<std::uint64_t>{0x401000, 0x402008}));
  EXPECT_EQ(t.size(), 3u);
  t.release();
}

TEST(RecordSiteTable, AnEmptyStackHasNoSite) {
  SiteTable<> t;
  ASSERT_TRUE(t.init(16));
  Define d;
  EXPECT_EQ(t.intern(SiteStack{}, d), kNoSite);
  EXPECT_TRUE(d.defined.empty());
  t.release();
}

TEST(RecordSiteTable, CollidingHashesAreToldApart) {
  SiteTable<OneHash> t;
  ASSERT_TRUE(t.init(16));
  Define d;
  std::map<std::uint64_t, std::uint64_t> ids;  // first frame -> id
  for (std::uint64_t i = 1; i <= 200; ++i) ids[i] = t.intern(stack({i, 7}), d);
  EXPECT_EQ(d.defined.size(), 200u);
  for (std::uint64_t i = 1; i <= 200; ++i) EXPECT_EQ(t.intern(stack({i, 7}), d), ids[i]);
  EXPECT_EQ(d.defined.size(), 200u);
  t.release();
}

TEST(RecordSiteTable, GrowsAndKeepsEveryId) {
  SiteTable<> t;
  ASSERT_TRUE(t.init(8));
  Define d;
  std::vector<std::uint64_t> ids;
  for (std::uint64_t i = 0; i < 20000; ++i) {
    SiteStack s;
    s.depth = kSiteFrames;
    for (std::size_t k = 0; k < kSiteFrames; ++k) s.frames[k] = 0x400000 + i * 16 + k;
    ids.push_back(t.intern(s, d));
  }
  EXPECT_EQ(t.size(), 20000u);
  for (std::uint64_t i = 0; i < 20000; i += 997) {
    SiteStack s;
    s.depth = kSiteFrames;
    for (std::size_t k = 0; k < kSiteFrames; ++k) s.frames[k] = 0x400000 + i * 16 + k;
    EXPECT_EQ(t.intern(s, d), ids[i]);
  }
  EXPECT_EQ(d.defined.size(), 20000u);
  t.release();
}

TEST(RecordSiteTable, AFailedDefinitionKeepsNothing) {
  SiteTable<> t;
  ASSERT_TRUE(t.init(16));
  bool fail = true;
  std::uint64_t next = 0;
  auto define = [&](const std::uint64_t*, std::size_t) { return fail ? kNoSite : ++next; };
  const auto a = stack({1, 2, 3});
  EXPECT_EQ(t.intern(a, define), kNoSite);
  EXPECT_EQ(t.size(), 0u);
  fail = false;
  EXPECT_EQ(t.intern(a, define), 1u);
  EXPECT_EQ(t.intern(a, define), 1u);
  t.release();
}

TEST(RecordSiteTable, ReleaseForgetsTheSites) {
  SiteTable<> t;
  ASSERT_TRUE(t.init(16));
  Define d;
  EXPECT_EQ(t.intern(stack({5}), d), 1u);
  t.release();
  ASSERT_TRUE(t.init(16));
  EXPECT_EQ(t.intern(stack({5}), d), 2u);  // defined anew, as in a fork child's trace
  t.release();
}

TEST(RecordSiteTable, FrameHashSeesEveryFrameAndTheDepth) {
  const FrameHash h;
  const std::uint64_t f[] = {1, 2, 3};
  const std::uint64_t g[] = {1, 2, 4};
  EXPECT_NE(h(f, 3), h(g, 3));
  EXPECT_NE(h(f, 2), h(f, 3));
}

}  // namespace
