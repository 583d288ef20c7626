// CoalescingRegions on plain mappings: the bins' sizes, carving from the top, a freed block
// reused by the next request of its size, neighbours joined (and the top lowered), splits,
// a block moved to an aligned start, purged free pages counted back when reused, labels,
// the check against stray frees, and a randomised run over three regions checked against a
// model (no overlap, contents kept, every region empty at the end).
#include <sys/mman.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <vector>

#include "strata/building/coalescing_regions.hpp"

using namespace strata;

namespace {

using Regions = CoalescingRegions;
using Region = Regions::Region;
constexpr std::size_t kRegionBytes = std::size_t{256} << 10;

// Regions in one mapping; regionOf finds the region of a block by its address.
class Mapping {
 public:
  explicit Mapping(int count) : count_(count) {
    base_ = static_cast<std::byte*>(::mmap(nullptr, kRegionBytes * count, PROT_READ | PROT_WRITE,
                                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    for (int i = 0; i < count; ++i) regions.push_back(Regions::makeRegion(base_ + i * kRegionBytes, kRegionBytes));
    current = this;
  }
  ~Mapping() { ::munmap(base_, kRegionBytes * count_); }
  static Region* regionOf(void* p) {
    const auto off = static_cast<std::size_t>(static_cast<std::byte*>(p) - current->base_);
    return current->regions[off / kRegionBytes];
  }
  std::vector<Region*> regions;
  static inline Mapping* current = nullptr;

 private:
  std::byte* base_;
  int count_;
};

std::uintptr_t addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

}  // namespace

TEST(CoalescingRegions, BinsCoverEverySizeOnce) {
  for (std::size_t s = 16; s < (std::size_t{1} << 20); s += 16) {
    const unsigned b = Regions::floorBin(s);
    ASSERT_LE(Regions::binSize(b), s) << s;
    ASSERT_GT(Regions::binSize(b + 1), s) << s;
    const unsigned c = Regions::ceilBin(s);
    ASSERT_GE(Regions::binSize(c), s) << s;
    ASSERT_TRUE(c == b || c == b + 1) << s;
  }
  EXPECT_EQ(Regions::binSize(Regions::floorBin(512)), 512u);
  EXPECT_EQ(Regions::binSize(Regions::floorBin(16384)), 16384u);
}

TEST(CoalescingRegions, CarvesUpwardsAndAFreedBlockServesItsSizeNext) {
  Mapping m(1);
  Regions bins;
  Region* r = m.regions[0];
  void* a = bins.carve(r, 600);
  void* b = bins.carve(r, 600);
  void* c = bins.carve(r, 600);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(addr(b) - addr(a), Regions::blockFor(600));
  EXPECT_GE(Regions::usable(a), 600u);
  EXPECT_EQ(r->liveBlocks, 3u);
  EXPECT_FALSE(bins.release(r, b));
  EXPECT_EQ(bins.freeBytes(), Regions::blockFor(600));
  EXPECT_EQ(bins.allocate(600, &Mapping::regionOf), b) << "the freed block, not a split of another";
  EXPECT_EQ(bins.freeBytes(), 0u);
  bins.release(r, b);
  bins.release(r, a);  // joins b
  EXPECT_EQ(bins.freeBytes(), 2 * Regions::blockFor(600));
  EXPECT_TRUE(bins.release(r, c)) << "c borders the top: the top falls to the first block";
  EXPECT_EQ(r->top, r->first);
  EXPECT_EQ(bins.freeBytes(), 0u);
  EXPECT_TRUE(Regions::isEmpty(r));
}

TEST(CoalescingRegions, ABigFreeBlockIsSplitAndItsRestServesOthers) {
  Mapping m(1);
  Regions bins;
  Region* r = m.regions[0];
  void* big = bins.carve(r, 10000);
  void* guard = bins.carve(r, 16);
  bins.release(r, big);
  void* small = bins.allocate(1000, &Mapping::regionOf);
  EXPECT_EQ(small, big) << "the only fit";
  EXPECT_EQ(bins.freeBytes(), Regions::blockFor(10000) - Regions::blockFor(1000));
  void* second = bins.allocate(3000, &Mapping::regionOf);
  EXPECT_EQ(addr(second), addr(small) + Regions::blockFor(1000));
  EXPECT_EQ(bins.allocate(20000, &Mapping::regionOf), nullptr) << "no free block fits";
  bins.release(r, small);
  bins.release(r, second);
  EXPECT_EQ(bins.freeBytes(), Regions::blockFor(10000)) << "joined back into one block";
  EXPECT_EQ(bins.allocate(10000, &Mapping::regionOf), big);
  bins.release(r, big);
  EXPECT_TRUE(bins.release(r, guard));
}

TEST(CoalescingRegions, ABlockMovedToAnAlignedStartLeavesItsLeadFree) {
  Mapping m(1);
  Regions bins;
  Region* r = m.regions[0];
  void* first = bins.carve(r, 16);  // so the next block starts unaligned to 4096
  void* b = bins.carve(r, 4096 + 4096 + 32);
  const std::uintptr_t q = (addr(b) + 4095) & ~std::uintptr_t{4095};
  ASSERT_GE(q - addr(b), Regions::MinBlock);
  void* aligned = bins.startAt(r, b, reinterpret_cast<void*>(q));
  EXPECT_EQ(addr(aligned), q);
  EXPECT_GE(Regions::usable(aligned), 4096u);
  EXPECT_EQ(r->liveBlocks, 2u);
  EXPECT_EQ(bins.freeBytes(), q - addr(b));
  std::memset(aligned, 7, Regions::usable(aligned));
  bins.release(r, first);  // joins the lead
  EXPECT_EQ(bins.freeBytes(), q - addr(first));
  EXPECT_TRUE(bins.release(r, aligned));
  EXPECT_EQ(bins.freeBytes(), 0u);
}

TEST(CoalescingRegions, PurgedPagesCountAsCommittedAgainWhenReused) {
  Mapping m(1);
  Regions bins;
  Region* r = m.regions[0];
  void* big = bins.carve(r, 64 << 10);
  void* guard = bins.carve(r, 16);
  bins.takeRecommitted();
  std::memset(big, 1, 64 << 10);
  bins.release(r, big);
  EXPECT_EQ(bins.committedFree(), Regions::blockFor(64 << 10));
  const std::size_t purged = bins.purgeFree(8192, platform::Decommit::Now);
  EXPECT_GE(purged, std::size_t{60} << 10);
  EXPECT_EQ(bins.purgeFree(8192, platform::Decommit::Now), 0u) << "already purged";
  EXPECT_EQ(bins.committedFree(), Regions::blockFor(64 << 10) - purged);
  auto* again = static_cast<unsigned char*>(bins.allocate(64 << 10, &Mapping::regionOf));
  ASSERT_EQ(again, big);
  EXPECT_EQ(bins.takeRecommitted(), purged);
  EXPECT_EQ(again[40000], 0) << "the purged pages read as zero (Now)";
  const std::size_t top = Regions::purgeTop(r, platform::Decommit::Now);
  EXPECT_GT(top, kRegionBytes / 2);
  EXPECT_EQ(Regions::purgeTop(r, platform::Decommit::Now), 0u);
  void* more = bins.carve(r, 100000);
  EXPECT_GE(bins.takeRecommitted(), std::size_t{96} << 10) << "carving above the purged top";
  bins.release(r, more);
  bins.release(r, again);
  EXPECT_TRUE(bins.release(r, guard));
  const auto above = static_cast<std::size_t>(r->end - r->committed);
  EXPECT_GT(above, 0u) << "still purged above the highest top";
  EXPECT_EQ(Regions::uncut(r), above);
  EXPECT_EQ(r->committed, r->end);
}

TEST(CoalescingRegions, LabelsLeaveSizesAloneAndStrayFreesAreNotPlausible) {
  Mapping m(1);
  Regions bins;
  Region* r = m.regions[0];
  void* a = bins.carve(r, 700);
  void* b = bins.carve(r, 700);
  const std::size_t usable = Regions::usable(a);
  EXPECT_EQ(Regions::labelOf(a), 0u);
  Regions::setLabel(a, 41);
  EXPECT_EQ(Regions::labelOf(a), 41u);
  EXPECT_EQ(Regions::usable(a), usable);
  EXPECT_TRUE(Regions::plausible(r, a));
  EXPECT_FALSE(Regions::plausible(r, static_cast<std::byte*>(a) + 16)) << "interior";
  EXPECT_FALSE(Regions::plausible(r, static_cast<std::byte*>(a) + 8)) << "unaligned";
  bins.release(r, a);
  EXPECT_FALSE(Regions::plausible(r, a)) << "already free";
  EXPECT_TRUE(bins.release(r, b));
  EXPECT_FALSE(Regions::plausible(r, b)) << "above the top";
}

// Random mallocs and frees of 1..20,000 bytes over three regions, each block filled with a
// pattern of its own: no two live blocks overlap, every pattern survives, the books agree
// with the model, and once everything is freed every region is empty again.
TEST(CoalescingRegions, ARandomRunKeepsBlocksApartAndEndsEmpty) {
  Mapping m(3);
  Regions bins;
  std::mt19937_64 rng(2026);
  struct Live {
    std::size_t n;
    unsigned char fill;
    Region* region;
  };
  std::map<std::uintptr_t, Live> live;
  std::size_t fills = 0;
  for (int step = 0; step < 60'000; ++step) {
    const bool alloc = live.empty() || rng() % 100 < 52;
    if (alloc) {
      const std::size_t n = rng() % 4 == 0 ? 1 + rng() % 20000 : 1 + rng() % 2000;
      void* p = bins.allocate(n, &Mapping::regionOf);
      Region* r = p != nullptr ? Mapping::regionOf(p) : nullptr;
      for (std::size_t i = 0; p == nullptr && i < m.regions.size(); ++i) {
        r = m.regions[i];
        p = bins.carve(r, n);
      }
      if (p == nullptr) continue;  // full: a free comes next
      ASSERT_EQ(addr(p) % 16, 0u);
      ASSERT_GE(Regions::usable(p), n);
      auto next = live.lower_bound(addr(p));
      if (next != live.end()) {
        ASSERT_LE(addr(p) + n, next->first) << "overlaps the next block";
      }
      if (next != live.begin()) {
        auto prev = std::prev(next);
        ASSERT_LE(prev->first + prev->second.n, addr(p)) << "overlaps the previous block";
      }
      const auto fill = static_cast<unsigned char>(++fills);
      std::memset(p, fill, n);
      live[addr(p)] = {n, fill, r};
    } else {
      auto it = live.begin();
      std::advance(it, static_cast<long>(rng() % live.size()));
      auto* p = reinterpret_cast<unsigned char*>(it->first);
      for (std::size_t k = 0; k < it->second.n; k += 61) ASSERT_EQ(p[k], it->second.fill);
      ASSERT_EQ(p[it->second.n - 1], it->second.fill);
      bins.release(it->second.region, p);
      live.erase(it);
    }
  }
  std::size_t liveBlocks = 0;
  for (Region* r : m.regions) liveBlocks += r->liveBlocks;
  EXPECT_EQ(liveBlocks, live.size());
  for (auto& [a, l] : live) bins.release(l.region, reinterpret_cast<void*>(a));
  for (Region* r : m.regions) {
    EXPECT_TRUE(Regions::isEmpty(r));
    EXPECT_EQ(r->top, r->first);
  }
  EXPECT_EQ(bins.freeBytes(), 0u);
}
