// SpanArena and SpanBins on a plain aligned mapping: the page map's runs (their length and
// state at the first page, the first page at the last), neighbours found across runs,
// starts of used runs told from interior pages; the bins' lengths (exact to 256 pages,
// then eight per doubling) and best fit, resident runs before clean ones.
#include <sys/mman.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "strata/strata_heap/span_arena.hpp"

using namespace strata;

namespace {

constexpr std::size_t kArenaBytes = std::size_t{1} << 24;  // 16 MiB: 4096 pages
using Arena = SpanArena<kArenaBytes, 16>;
using Node = Arena::Node;
using Bins = SpanBins<Arena>;

// A fresh arena in a mapping aligned to its size (zero pages, as the source gives them).
class ArenaMap {
 public:
  ArenaMap() {
    raw_ = ::mmap(nullptr, 2 * kArenaBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    const auto a = (reinterpret_cast<std::uintptr_t>(raw_) + kArenaBytes - 1) & ~(kArenaBytes - 1);
    base = reinterpret_cast<void*>(a);
  }
  ~ArenaMap() { ::munmap(raw_, 2 * kArenaBytes); }
  Arena::Header* header() const { return static_cast<Arena::Header*>(base); }
  void* base;

 private:
  void* raw_;
};

}  // namespace

TEST(SpanArena, AFreshArenaIsOneCleanRunAfterItsHeader) {
  ArenaMap m;
  Node* run = Arena::init(m.base, 0x77);
  EXPECT_EQ(m.header()->kind, 0x77u);
  EXPECT_EQ(Arena::indexOf(run), Arena::HeaderPages);
  EXPECT_EQ(run->len, Arena::UsablePages);
  EXPECT_EQ(run->state, Arena::kClean);
  EXPECT_EQ(m.header()->freePages, Arena::UsablePages);
  EXPECT_EQ(Arena::nextRun(run), nullptr);
  EXPECT_EQ(Arena::prevRun(run), nullptr);
  EXPECT_EQ(Arena::pageAddress(run), static_cast<std::byte*>(m.base) + Arena::HeaderPages * kSpanPageBytes);
  EXPECT_GE(Arena::HeaderPages * kSpanPageBytes, sizeof(Arena::Header));
}

TEST(SpanArena, RunsFindTheirNeighboursAndOnlyUsedStartsAreObjects) {
  ArenaMap m;
  Node* all = Arena::init(m.base, 1);
  const std::size_t total = all->len;
  Node* a = all;
  Node* b = a + 3;
  Node* c = b + 5;
  Arena::setRun(a, 3, Arena::kUsed);
  Arena::setRun(b, 5, Arena::kDirty);
  Arena::setRun(c, total - 8, Arena::kUsed);
  EXPECT_EQ(Arena::nextRun(a), b);
  EXPECT_EQ(Arena::nextRun(b), c);
  EXPECT_EQ(Arena::prevRun(c), b);
  EXPECT_EQ(Arena::prevRun(b), a);
  EXPECT_TRUE(Arena::isFree(b));
  EXPECT_FALSE(Arena::isFree(a));
  EXPECT_EQ(Arena::usedRunAt(m.header(), Arena::pageAddress(a)), a);
  EXPECT_EQ(Arena::usedRunAt(m.header(), Arena::pageAddress(c)), c);
  EXPECT_EQ(Arena::usedRunAt(m.header(), Arena::pageAddress(b)), nullptr) << "free, not an object";
  EXPECT_EQ(Arena::usedRunAt(m.header(), Arena::pageAddress(a) + kSpanPageBytes), nullptr) << "interior";
  EXPECT_EQ(Arena::usedRunAt(m.header(), Arena::pageAddress(a) + 16), nullptr) << "not a page start";
  EXPECT_EQ(Arena::usedRunAt(m.header(), m.base), nullptr) << "the header";
}

TEST(SpanBins, LengthsFileExactlyThenEightPerDoubling) {
  for (std::size_t n = 1; n <= 256; ++n) EXPECT_EQ(Bins::binOf(n), n - 1);
  std::size_t last = 0;
  std::set<std::size_t> seen;
  for (std::size_t n = 1; n <= Arena::Pages; ++n) {
    const std::size_t b = Bins::binOf(n);
    ASSERT_GE(b, last) << "never decreasing at " << n;
    ASSERT_LT(b, Bins::Bins);
    last = b;
    seen.insert(b);
  }
  EXPECT_EQ(Bins::binOf(256), 255u);
  EXPECT_EQ(Bins::binOf(257), 256u);
  EXPECT_EQ(Bins::binOf(288), 257u) << "256 + 32: the next eighth";
  EXPECT_EQ(seen.size(), 256u + 8u * 4u + 1u) << "256 exact lists, 8 per doubling to 4096";
}

TEST(SpanBins, TakeIsBestFitAndPrefersResidentRuns) {
  ArenaMap m;
  Node* all = Arena::init(m.base, 1);
  // Runs of 3 (clean), 3 (dirty), 7, 300 and 290 pages, separated by used pages.
  const std::size_t lens[] = {3, 3, 7, 300, 290};
  const Arena::State states[] = {Arena::kClean, Arena::kDirty, Arena::kDirty, Arena::kDirty, Arena::kDirty};
  Node* runs[5];
  Node* at = all;
  Bins bins;
  for (int i = 0; i < 5; ++i) {
    Arena::setRun(at, lens[i], states[i]);
    runs[i] = at;
    bins.insert(at);
    Arena::setRun(at + lens[i], 1, Arena::kUsed);
    at += lens[i] + 1;
  }
  EXPECT_EQ(bins.take(2), runs[1]) << "the shortest that fits, the resident one first";
  EXPECT_EQ(bins.take(3), runs[0]);
  EXPECT_EQ(bins.take(3), runs[2]) << "no 3 left: the 7";
  EXPECT_EQ(bins.take(289), runs[4]) << "in the same eighth, the shorter of the two";
  EXPECT_EQ(bins.take(301), nullptr) << "nothing that long";
  EXPECT_EQ(bins.take(1), runs[3]);
  EXPECT_EQ(bins.take(1), nullptr) << "empty";
}

TEST(SpanBins, RemoveAndLongestFirstWalk) {
  ArenaMap m;
  Node* all = Arena::init(m.base, 1);
  Bins bins;
  Node* a = all;
  Node* b = all + 20;
  Node* c = all + 1000;
  Arena::setRun(a, 10, Arena::kDirty);
  Arena::setRun(b, 500, Arena::kDirty);
  Arena::setRun(c, 40, Arena::kClean);
  for (Node* r : {a, b, c}) bins.insert(r);
  std::vector<std::uint32_t> order;
  bins.forEachLongestFirst([&](Node* r) {
    order.push_back(r->len);
    return true;
  });
  EXPECT_EQ(order, (std::vector<std::uint32_t>{500, 40, 10}));
  bins.remove(b);
  EXPECT_EQ(bins.take(100), nullptr) << "removed";
  EXPECT_EQ(bins.take(11), c);
}
