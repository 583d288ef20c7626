#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>

#include "strata/combining/select_mmap_heap.hpp"
#include "strata/representation/size_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/mmap_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/utility/ansi_wrapper.hpp"
#include "support/differential.hpp"

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
  EXPECT_EQ(h.getSize(big), detail::page_size() - MmapHeap::HeaderSize);
  EXPECT_EQ(h.big().bytesHeld(), detail::page_size());
  EXPECT_EQ(h.bytesHeld(), h.small().bytesHeld() + detail::page_size());
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

TEST(SelectMmapHeap, HugeRequestsAreNull) {
  Select h;
  for (std::size_t n : {SIZE_MAX, SIZE_MAX - 16, SIZE_MAX - 4096, std::size_t{1} << 62}) {
    errno = 0;
    EXPECT_EQ(h.malloc(n), nullptr) << n;
    EXPECT_EQ(errno, ENOMEM);
  }
}

TEST(SelectMmapHeap, Differential) {
  using Routed = SelectMmapHeap<16384, SizeHeap<SbrkHeap<>>, MmapHeap>;
  test::expectEverythingReturned<ANSIWrapper<Routed>>({.seed = 61, .ops = 200'000, .maxLive = 1000});
}
