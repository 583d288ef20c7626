#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "strata/building/adapt_heap.hpp"
#include "strata/combining/seg_heap.hpp"
#include "strata/combining/select_mmap_heap.hpp"
#include "strata/platform/page.hpp"
#include "strata/representation/size_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/mmap_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/utility/ansi_wrapper.hpp"
#include "common/differential.hpp"

using namespace strata;

namespace {

// Counts the frees that reach a heap, to see where the router sent each object.
template <Heap Super>
class CountingHeap : public Super {
 public:
  static constexpr std::size_t Alignment = Super::Alignment;
  void free(void* p) noexcept {
    ++frees;
    Super::free(p);
  }
  int frees = 0;
};

}  // namespace

using Small = CountingHeap<SizeHeap<MallocHeap>>;
using Big = CountingHeap<MmapHeap>;
// A threshold that is not a multiple of 16, so rounding alone can carry a small object's
// usable size over it.
using Select = SelectMmapHeap<1000, Small, Big>;

static_assert(SizedHeap<Select> && Select::Alignment == 16);
static_assert(MappedHeap<MmapHeap> && !MappedHeap<SizeHeap<MallocHeap>>);
static_assert(!AccountedHeap<Select>);  // no honest combined peak
static_assert(requires(const Select& s) { { s.bytesHeld() } -> std::same_as<std::size_t>; });

TEST(SelectMmapHeap, RoutesMallocBySize) {
  Select h;
  void* small = h.malloc(999);
  void* big = h.malloc(1000);
  ASSERT_NE(small, nullptr);
  ASSERT_NE(big, nullptr);
  EXPECT_FALSE(MmapHeap::isMapped(small));
  EXPECT_TRUE(MmapHeap::isMapped(big));
  EXPECT_EQ(h.getSize(small), 1008u);
  EXPECT_EQ(h.getSize(big), platform::pageSize() - MmapHeap::HeaderSize);
  EXPECT_EQ(h.big().bytesHeld(), platform::pageSize());
  EXPECT_EQ(h.bytesHeld(), h.small().bytesHeld() + platform::pageSize());
  h.free(small);
  h.free(big);
  EXPECT_EQ(h.bytesHeld(), 0u);
}

TEST(SelectMmapHeap, RoutesFreeByTheMappedFlagNotBySize) {
  Select h;
  void* small = h.malloc(999);
  ASSERT_GE(h.getSize(small), 1000u);  // a size-based router would send it to Big
  h.free(small);
  EXPECT_EQ(h.small().frees, 1);
  EXPECT_EQ(h.big().frees, 0);
  void* big = h.malloc(5000);
  h.free(big);
  EXPECT_EQ(h.small().frees, 1);
  EXPECT_EQ(h.big().frees, 1);
  h.free(nullptr);
  EXPECT_EQ(h.small().frees + h.big().frees, 2);
  EXPECT_EQ(h.getSize(nullptr), 0u);
}

// A mapped object is resized by its mapping; Small's objects, by Small when it can (here it
// cannot).
TEST(SelectMmapHeap, ReallocInPlaceAsksTheHeapThatMadeTheObject) {
  static_assert(ResizesInPlace<Select> && ResizableMappings<Big>);
  static_assert(!ResizesInPlace<Small>);
  Select h;
  const std::size_t page = platform::pageSize();
  void* small = h.malloc(500);
  void* big = h.malloc(40 * page);
  ASSERT_TRUE(small && big);
  EXPECT_EQ(h.reallocInPlace(small, 100), nullptr);
  EXPECT_EQ(h.getSize(small), 512u);
  EXPECT_EQ(h.reallocInPlace(big, 100), big);  // stays mapped, one page now
  EXPECT_TRUE(MmapHeap::isMapped(big));
  EXPECT_EQ(h.getSize(big), page - MmapHeap::HeaderSize);
  EXPECT_EQ(h.big().bytesHeld(), page);
  h.free(small);
  h.free(big);
  EXPECT_EQ(h.small().frees, 1);
  EXPECT_EQ(h.big().frees, 1);
  EXPECT_EQ(h.bytesHeld(), 0u);
}

using Dynamic = SelectMmapHeap<1000, Small, Big, true>;
static_assert(SizedHeap<Dynamic> && Dynamic::MaxDynamicThreshold == (32u << 20));

TEST(SelectMmapHeap, FixedThresholdNeverMoves) {
  Select h;
  void* big = h.malloc(100'000);
  h.free(big);
  EXPECT_EQ(h.threshold(), 1000u);
  void* again = h.malloc(100'000);
  EXPECT_TRUE(MmapHeap::isMapped(again));
  h.free(again);
}

TEST(SelectMmapHeap, DynamicThresholdRisesPastFreedMappedObjects) {
  Dynamic h;
  EXPECT_EQ(h.threshold(), 1000u);
  void* big = h.malloc(100'000);
  ASSERT_TRUE(MmapHeap::isMapped(big));
  const std::size_t size = h.getSize(big);
  EXPECT_EQ(h.threshold(), 1000u) << "allocating alone does not move it";
  h.free(big);
  EXPECT_EQ(h.big().frees, 1);
  EXPECT_EQ(h.big().bytesHeld(), 0u) << "the mapping itself is still returned";
  EXPECT_EQ(h.threshold(), size + 1);
  // The same request, and any up to the freed object's size, now goes to Small, where it is
  // recycled rather than mapped afresh each time.
  void* again = h.malloc(100'000);
  void* largest = h.malloc(size);
  EXPECT_FALSE(MmapHeap::isMapped(again));
  EXPECT_FALSE(MmapHeap::isMapped(largest));
  h.free(again);
  h.free(largest);
  EXPECT_EQ(h.small().frees, 2);
  EXPECT_EQ(h.threshold(), size + 1) << "freeing Small's objects does not move it";
  // Bigger requests are still mapped, and move it again when freed.
  void* bigger = h.malloc(size + 1);
  EXPECT_TRUE(MmapHeap::isMapped(bigger));
  const std::size_t biggerSize = h.getSize(bigger);
  h.free(bigger);
  EXPECT_EQ(h.threshold(), biggerSize + 1);
}

TEST(SelectMmapHeap, DynamicThresholdNeverFallsAndStopsAt32MiB) {
  Dynamic h;
  void* a = h.malloc(200'000);
  void* b = h.malloc(100'000);
  const std::size_t aSize = h.getSize(a);
  h.free(a);
  EXPECT_EQ(h.threshold(), aSize + 1);
  h.free(b);  // mapped under the old threshold, smaller than the new one
  EXPECT_EQ(h.threshold(), aSize + 1);
  // An object beyond the cap is mapped and returned but leaves the threshold where it is.
  void* huge = h.malloc(Dynamic::MaxDynamicThreshold + 1);
  ASSERT_NE(huge, nullptr);
  EXPECT_TRUE(MmapHeap::isMapped(huge));
  h.free(huge);
  EXPECT_EQ(h.threshold(), aSize + 1);
}

// A Small that can serve from free memory alone is asked first for a big request: mapping
// replaces growing Small, not reusing it.
using BinnedSmall =
    CountingHeap<SegHeap<8, PowerOfTwoClasses<4>, DLListHeap, SizeHeap<MallocHeap>>>;
static_assert(BinnedHeap<BinnedSmall> && !BinnedHeap<Small>);

TEST(SelectMmapHeap, ABigRequestTakesAFreeFitFromABinnedSmallBeforeMapping) {
  SelectMmapHeap<1000, BinnedSmall, Big> h;
  void* a = h.malloc(999);  // 1008 usable, from Small
  ASSERT_FALSE(MmapHeap::isMapped(a));
  h.free(a);
  void* b = h.malloc(1000);
  EXPECT_EQ(b, a) << "a free object of Small fits";
  EXPECT_EQ(h.big().bytesHeld(), 0u);
  void* c = h.malloc(1000);  // nothing free in Small now: mapped
  EXPECT_TRUE(MmapHeap::isMapped(c));
  h.free(b);
  h.free(c);
  EXPECT_EQ(h.small().frees, 2);
  EXPECT_EQ(h.big().frees, 1);
}

// Small out of memory (a reservation made small under an address-space limit): requests
// below the threshold get a mapping instead of NULL, as glibc maps when the break cannot
// grow, and go back to Big when freed. libstrata-kingsley.so and libstrata-lea.so started
// under `ulimit -v` refused them even after the limit was lifted.
TEST(SelectMmapHeap, SmallOutOfMemoryFallsBackToAMapping) {
  SelectMmapHeap<4096, SizeHeap<SbrkHeap<(1u << 20), (1u << 20)>>, Big> h;
  std::vector<void*> blocks;
  bool mapped = false;
  for (int i = 0; i < 2000; ++i) {
    void* p = h.malloc(900);
    ASSERT_NE(p, nullptr) << "request " << i;
    std::memset(p, 1, 900);
    mapped = mapped || MmapHeap::isMapped(p);
    blocks.push_back(p);
  }
  EXPECT_TRUE(mapped) << "1 MiB of Small cannot hold 2000 x 900 bytes";
  for (void* p : blocks) h.free(p);
  EXPECT_GT(h.big().frees, 0);
  EXPECT_EQ(h.big().bytesHeld(), 0u);
}

TEST(SelectMmapHeap, HugeRequestsAreNull) {
  Select h;
  for (std::size_t n : {SIZE_MAX, SIZE_MAX - 16, SIZE_MAX - 4096, std::size_t{1} << 62}) {
    errno = 0;
    EXPECT_EQ(h.malloc(n), nullptr) << n;
    EXPECT_EQ(errno, ENOMEM);
  }
}

TEST(SelectMmapHeap, DifferentialDynamic) {
  // Large objects (16 KiB .. 512 KiB) around the threshold, so it keeps rising while mapped
  // and unmapped objects are alive together.
  using Routed = SelectMmapHeap<16384, SizeHeap<MallocHeap>, MmapHeap, true>;
  test::expectEverythingReturned<ANSIWrapper<Routed>>(
      {.seed = 62, .ops = 20'000, .maxLive = 200, .sizes = test::SizeMix::Large});
}

TEST(SelectMmapHeap, Differential) {
  using Routed = SelectMmapHeap<16384, SizeHeap<SbrkHeap<>>, MmapHeap>;
  test::expectEverythingReturned<ANSIWrapper<Routed>>({.seed = 61, .ops = 200'000, .maxLive = 1000});
}
