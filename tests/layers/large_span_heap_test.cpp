// LargeSpanHeap over a small test double for the requests below MinSpan (a bump allocator)
// and the real AccountedSegments<SegmentHeap<>>: routing by size, objects as page runs in
// arenas, best fit and joining of freed neighbours, interior and double frees ignored,
// realloc growth and shrinking in place, aligned objects, zeroed memory after reuse, the
// purge of free runs beyond the allowance, arenas given back, and a randomised run checked
// against a model of every live object's bytes.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "strata/strata_heap/accounted_segments.hpp"
#include "strata/strata_heap/large_span_heap.hpp"
#include "strata/top/segment_heap.hpp"

using namespace strata;

namespace {

// Requests up to MaxSmall bump-allocated from malloc'ed memory; counts what is routed here.
template <class Super>
class SmallDouble : public Super {
 public:
  static constexpr std::size_t MaxSmall = 4096;
  using Super::Super;
  void* malloc(std::size_t n) noexcept {
    ++mallocs;
    return ::operator new(n == 0 ? 1 : n, std::nothrow);
  }
  void* mallocZeroed(std::size_t n) noexcept {
    void* p = malloc(n);
    std::memset(p, 0, n);
    return p;
  }
  void* mallocAlignedIn(std::size_t, std::size_t need) noexcept { return malloc(need); }
  void trimHeaps() noexcept { ++trims; }
  int mallocs = 0, trims = 0;
};

constexpr std::size_t kPage = kSpanPageBytes;
using Span = LargeSpanHeap<SmallDouble<AccountedSegments<SegmentHeap<>>>, 4096, 24>;

std::unique_ptr<Span> makeHeap(std::uint64_t delayMs = 250, std::size_t dirtySlots = 4) {
  StrataTunables t;
  t.purgeDelayMs = delayMs;
  t.dirtySlots = dirtySlots;
  return std::make_unique<Span>(t);
}

void* chunk(Span& h, void* p) { return h.chunkOf(p); }
void release(Span& h, void* p) { ASSERT_TRUE(h.freeOther(chunk(h, p), p)); }
std::size_t usable(Span& h, void* p) { return h.getSizeOther(chunk(h, p), p); }

}  // namespace

TEST(LargeSpanHeap, SmallRequestsGoToSuperLargeOnesArePageRuns) {
  auto h = makeHeap();
  void* small = h->malloc(4096);
  EXPECT_EQ(h->mallocs, 1);
  ::operator delete(small);
  void* big = h->malloc(4097);
  EXPECT_EQ(h->mallocs, 1) << "above MinSpan: a span";
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(big) % kPage, 0u);
  EXPECT_EQ(usable(*h, big), 2 * kPage) << "rounded to pages only";
  std::memset(big, 0xab, 4097);
  EXPECT_EQ(Span::MaxSize, (std::size_t{1} << 24) / 4 + kPage) << "a quarter of an arena, and room for a header";
  release(*h, big);
  errno = 0;
  EXPECT_EQ(h->malloc(Span::MaxSize + 1), nullptr) << "no arena holds it";
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_EQ(h->mallocZeroed(std::size_t{1} << 40), nullptr);
}

TEST(LargeSpanHeap, FreedRunsAreReusedBestFitAndJoinTheirNeighbours) {
  auto h = makeHeap();
  void* a = h->malloc(3 * kPage);
  void* b = h->malloc(5 * kPage);
  void* c = h->malloc(3 * kPage);
  void* guard = h->malloc(2 * kPage);
  EXPECT_EQ(static_cast<std::byte*>(b), static_cast<std::byte*>(a) + 3 * kPage) << "placed in order";
  release(*h, b);
  release(*h, a);
  void* fit = h->malloc(8 * kPage);
  EXPECT_EQ(fit, a) << "a and b joined into one run of 8 pages";
  release(*h, fit);
  release(*h, c);
  void* whole = h->malloc(11 * kPage);
  EXPECT_EQ(whole, a) << "and c joined too";
  release(*h, whole);
  release(*h, guard);
}

TEST(LargeSpanHeap, InteriorAndSecondFreesAreIgnored) {
  auto h = makeHeap();
  auto* p = static_cast<std::byte*>(h->malloc(4 * kPage));
  EXPECT_FALSE(h->freeOther(chunk(*h, p), p + kPage)) << "an interior page";
  EXPECT_FALSE(h->freeOther(chunk(*h, p), p + 16)) << "not a page start";
  EXPECT_EQ(usable(*h, p + kPage), 0u);
  EXPECT_EQ(usable(*h, p), 4 * kPage) << "the object is intact";
  release(*h, p);
  EXPECT_FALSE(h->freeOther(chunk(*h, p), p)) << "a second free";
  EXPECT_EQ(usable(*h, p), 0u);
}

TEST(LargeSpanHeap, ResizeGrowsIntoFreePagesAfterAndShrinksWhereItIs) {
  auto h = makeHeap();
  auto* p = static_cast<std::byte*>(h->malloc(4 * kPage));
  std::memset(p, 7, 4 * kPage);
  EXPECT_TRUE(h->resizeOther(chunk(*h, p), p, 10 * kPage)) << "the pages after are free";
  EXPECT_EQ(usable(*h, p), 10 * kPage);
  EXPECT_EQ(static_cast<int>(p[4 * kPage - 1]), 7) << "nothing moved";
  void* next = h->malloc(2 * kPage);
  EXPECT_EQ(next, p + 10 * kPage);
  EXPECT_FALSE(h->resizeOther(chunk(*h, p), p, 11 * kPage)) << "the next page is in use";
  EXPECT_TRUE(h->resizeOther(chunk(*h, p), p, 3 * kPage + 1));
  EXPECT_EQ(usable(*h, p), 4 * kPage);
  void* tail = h->malloc(6 * kPage);
  EXPECT_EQ(tail, p + 4 * kPage) << "the cut pages are free again";
  EXPECT_FALSE(h->resizeOther(chunk(*h, p), p, 100)) << "small enough for Super: moving is the caller's";
  release(*h, tail);
  release(*h, next);
  release(*h, p);
}

TEST(LargeSpanHeap, AlignedObjectsStartAtTheirAlignmentAndLeaveNoPagesBehind) {
  auto h = makeHeap();
  const std::size_t align = 64 << 10, n = 3 * kPage;
  void* p = h->mallocAlignedIn(align, n + align - 16);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % align, 0u);
  EXPECT_EQ(usable(*h, p), n) << "the pages before and after went back";
  void* q = h->mallocAlignedIn(256, 5000 + 256 - 16);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(q) % kPage, 0u) << "a page start is aligned already";
  release(*h, p);
  release(*h, q);
  errno = 0;
  EXPECT_EQ(h->mallocAlignedIn(std::size_t{1} << 24, 8192 + (std::size_t{1} << 24)), nullptr);
  EXPECT_EQ(errno, ENOMEM) << "no arena holds that alignment";
}

TEST(LargeSpanHeap, ZeroedMemoryAfterReuseReadsAsZero) {
  auto h = makeHeap();
  auto* p = static_cast<unsigned char*>(h->malloc(6 * kPage));
  std::memset(p, 0xee, 6 * kPage);
  release(*h, p);
  auto* z = static_cast<unsigned char*>(h->mallocZeroed(6 * kPage - 100));
  ASSERT_EQ(static_cast<void*>(z), static_cast<void*>(p)) << "the same pages, dirty";
  for (std::size_t i = 0; i < 6 * kPage - 100; ++i) ASSERT_EQ(z[i], 0) << i;
  release(*h, z);
}

TEST(LargeSpanHeap, FreeRunsBeyondTheAllowanceGoBackWhenDue) {
  auto h = makeHeap(0, 0);  // no delay, no fixed allowance: only 1/8 of the pages in use
  void* keep = h->malloc(64 * kPage);
  const std::size_t before = h->committed();
  void* big = h->malloc(512 * kPage);
  EXPECT_EQ(h->committed(), before + 512 * kPage);
  release(*h, big);
  EXPECT_LE(h->committed(), before + 8 * kPage) << "beyond 1/8 of 64 pages: decommitted";
  auto* again = static_cast<unsigned char*>(h->malloc(512 * kPage));
  EXPECT_EQ(again[0], 0) << "decommitted pages read as zero";
  release(*h, again);
  release(*h, keep);

  auto lazy = makeHeap(60'000, 0);
  void* k2 = lazy->malloc(64 * kPage);
  void* b2 = lazy->malloc(512 * kPage);
  const std::size_t held = lazy->committed();
  release(*lazy, b2);
  EXPECT_EQ(lazy->committed(), held) << "within the delay: kept for reuse";
  lazy->trimHeaps();
  EXPECT_EQ(lazy->trims, 1) << "Super trimmed too";
  EXPECT_LT(lazy->committed(), held - 500 * kPage) << "trim gives every free run back";
  release(*lazy, k2);
}

TEST(LargeSpanHeap, TrimGivesBackAWhollyFreeSpareArena) {
  auto h = makeHeap();
  void* p = h->malloc(8 * kPage);
  release(*h, p);
  EXPECT_GT(h->committed(), 0u) << "the arena stays as the spare";
  h->trimHeaps();
  EXPECT_EQ(h->committed(), 0u) << "nothing of it is left in the books";
  void* again = h->malloc(8 * kPage);
  ASSERT_NE(again, nullptr) << "a new arena";
  release(*h, again);
}

TEST(LargeSpanHeap, AWhollyFreeArenaGoesBackWhenAnotherIsFree) {
  auto h = makeHeap();
  const std::size_t max = Span::MaxSize;
  std::vector<void*> objects;
  for (int i = 0; i < 12; ++i) objects.push_back(h->malloc(max));  // 3 arenas' worth and more
  std::set<void*> arenas;
  for (void* p : objects) arenas.insert(chunk(*h, p));
  ASSERT_GE(arenas.size(), 4u);
  const std::size_t mapped = h->committed();
  for (void* p : objects) release(*h, p);
  EXPECT_LT(h->committed(), mapped / 2) << "all but one empty arena went back";
  void* again = h->malloc(max);
  EXPECT_NE(again, nullptr);
  release(*h, again);
}

TEST(LargeSpanHeap, RandomisedObjectsKeepTheirBytes) {
  auto h = makeHeap(0, 1);
  std::mt19937_64 rng(42);
  std::map<std::byte*, std::pair<std::size_t, unsigned char>> live;
  auto check = [&](std::byte* p) {
    const auto [n, v] = live[p];
    for (std::size_t i = 0; i < n; i += 509) ASSERT_EQ(static_cast<unsigned char>(p[i]), v);
    ASSERT_EQ(static_cast<unsigned char>(p[n - 1]), v);
  };
  for (int step = 0; step < 4000; ++step) {
    const auto r = rng() % 10;
    if (r < 5 || live.empty()) {
      const std::size_t n = 4097 + rng() % (std::size_t{1} << (12 + rng() % 9));
      auto* p = static_cast<std::byte*>(h->malloc(n));
      ASSERT_NE(p, nullptr);
      auto next = live.lower_bound(p);
      if (next != live.end()) {
        ASSERT_LE(p + n, next->first) << "overlaps the next object";
      }
      if (next != live.begin()) {
        auto prev = std::prev(next);
        ASSERT_LE(prev->first + prev->second.first, p) << "overlaps the previous object";
      }
      const auto v = static_cast<unsigned char>(step);
      std::memset(p, v, n);
      live[p] = {n, v};
    } else {
      auto it = live.begin();
      std::advance(it, static_cast<long>(rng() % live.size()));
      check(it->first);
      if (r < 8) {
        release(*h, it->first);
        live.erase(it);
      } else {
        const std::size_t n = 4097 + rng() % (std::size_t{1} << 18);
        if (h->resizeOther(chunk(*h, it->first), it->first, n)) {
          std::memset(it->first, it->second.second, n);
          it->second.first = n;
        }
        ASSERT_GE(usable(*h, it->first), it->second.first);
      }
    }
  }
  for (auto& [p, nv] : live) {
    check(p);
    release(*h, p);
  }
}
