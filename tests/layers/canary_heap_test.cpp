// CanaryHeap: the differential harness over the header layer; a write of even one byte past
// an object's end stops the process at its free or resize, with the first damaged byte's
// address; an exact fill, and resizes that move the canary, raise nothing; with the canaries
// turned off the layer passes every call through.
#include "strata/hardening/canary_heap.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "strata/general/strata_heap.hpp"
#include "strata/hardening/checked_header_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "common/differential.hpp"

using namespace strata;

using Canaried = CanaryHeap<CheckedHeaderHeap<StrataHeap>>;
static_assert(ExactSizedHeap<Canaried> && Canaried::Alignment == 16);
static_assert(ResizesInPlace<Canaried> && ZeroingHeap<Canaried> && MovingHeap<Canaried>);
static_assert(!ExactSizedHeap<MallocHeap>, "malloc_usable_size is not the size asked for");

// An exact-sized parent that does not lend its seal: the canary is then the layer's own tag
// of the address.
class UnsealedHeader : public CheckedHeaderHeap<StrataHeap> {
 public:
  std::uint64_t objectSeal(const void*) const = delete;
};
using CanariedUnsealed = CanaryHeap<UnsealedHeader>;
static_assert(SealingHeap<CheckedHeaderHeap<StrataHeap>> && !SealingHeap<UnsealedHeader>);
static_assert(ExactSizedHeap<UnsealedHeader>);

TEST(CanaryHeap, Differential) {
  test::expectEverythingReturned<Canaried>({.seed = 41, .ops = 400'000});
}

TEST(CanaryHeap, DifferentialOverAParentThatDoesNotSeal) {
  test::expectEverythingReturned<CanariedUnsealed>({.seed = 43, .ops = 200'000});
}

namespace {
std::uint64_t canaryAfter(const void* p, std::size_t n) {
  std::uint64_t c;
  std::memcpy(&c, static_cast<const char*>(p) + n, sizeof c);
  return c;
}
}  // namespace

// Over a sealing parent the canary follows the object's seal: the same block handed out
// again for another size gets another canary, so an old canary replayed at the new end
// does not pass.
TEST(CanaryHeap, TheSameBlockAtAnotherSizeGetsAnotherCanary) {
  auto h = std::make_unique<Canaried>();
  void* p = h->malloc(40);
  const std::uint64_t first = canaryAfter(p, 40);
  h->free(p);
  void* q = h->malloc(32);
  ASSERT_EQ(q, p) << "the block just freed, reused for the same class";
  EXPECT_NE(canaryAfter(q, 32), first);
  EXPECT_EQ(canaryAfter(q, 32) & 0xff, 0u) << "the first byte stays zero";
  h->free(q);
}

TEST(CanaryHeap, ExactFillsAndResizesRaiseNothing) {
  auto h = std::make_unique<Canaried>();
  for (std::size_t n : {1u, 8u, 24u, 100u, 4096u, 70'000u}) {
    auto* p = static_cast<unsigned char*>(h->malloc(n));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(h->getSize(p), n);
    std::memset(p, 0xff, n);  // every byte of the object, none past it
    if (void* q = h->reallocInPlace(p, n / 2 + 1)) {
      EXPECT_EQ(q, p);
      EXPECT_EQ(h->getSize(p), n / 2 + 1);
      std::memset(p, 0xee, n / 2 + 1);
    }
    h->free(p);
  }
  auto* z = static_cast<unsigned char*>(h->mallocZeroed(300));
  for (int i = 0; i < 300; ++i) ASSERT_EQ(z[i], 0);
  h->free(z);
}

TEST(CanaryHeap, TurnedOffPassesThrough) {
  auto h = std::make_unique<Canaried>(CanaryOptions{.enabled = false});
  EXPECT_FALSE(h->canaries());
  auto* p = static_cast<char*>(h->malloc(24));
  EXPECT_EQ(h->getSize(p), 24u);
  p[24] = 'x';  // no canary there to damage (the block's slack)
  h->free(p);
}

// A big zeroed object keeps its tail untouched: the canary reads as zero, and passes.
TEST(CanaryHeap, ABigZeroedObjectsCanaryIsLeftUnwritten) {
  auto h = std::make_unique<Canaried>();
  const std::size_t n = 3 * Canaried::kLazyFrom;
  auto* p = static_cast<unsigned char*>(h->mallocZeroed(n));
  for (std::size_t i = 0; i < n + Canaried::CanaryBytes; ++i) ASSERT_EQ(p[i], 0) << i;
  p[0] = 1;
  h->free(p);
}

namespace {
bool pageResident(const void* at) {
  unsigned char in = 0;
  const auto page = reinterpret_cast<std::uintptr_t>(at) & ~std::uintptr_t{4095};
  EXPECT_EQ(::mincore(reinterpret_cast<void*>(page), 1, &in), 0);
  return (in & 1) != 0;
}
}  // namespace

// Freeing a big zeroed object whose end nothing wrote to does not read its canary, so the
// page it lies on stays out of memory (a sparse calloc's untouched end stays untouched).
TEST(CanaryHeap, ABigZeroedObjectsUntouchedEndIsNotReadAtFree) {
  auto h = std::make_unique<Canaried>();
  const std::size_t n = std::size_t{1} << 20;
  auto* p = static_cast<char*>(h->mallocZeroed(n));
  ASSERT_NE(p, nullptr);
  p[0] = 1;
  // The end page out of memory, as a fresh one is (it still reads as zero, as it must).
  void* endPage = reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(p + n) & ~std::uintptr_t{4095});
  ASSERT_EQ(::madvise(endPage, 4096, MADV_DONTNEED), 0);
  ASSERT_FALSE(pageResident(p + n));
  h->free(p);
  EXPECT_FALSE(pageResident(p + n)) << "the free read the canary of an untouched end";
}

using CanaryHeapDeathTest = ::testing::Test;

TEST_F(CanaryHeapDeathTest, ABigZeroedObjectsOverflowIsStillReported) {
  static Canaried h;
  auto* p = static_cast<char*>(h.mallocZeroed(2 * Canaried::kLazyFrom));
  p[2 * Canaried::kLazyFrom + 2] = 'A';
  EXPECT_DEATH(h.free(p), "strata: overflow past the end of an object at 0x");
}

namespace {
constexpr std::size_t kBigZeroed = 2 * Canaried::kLazyFrom;

// A big zeroed object of h's that its parent cleared by writing (the block just freed,
// reused), its canary then overwritten with zeros: into p.
void zeroOverflowOfAReusedZeroedObject(Canaried& h, char*& p) {
  void* first = h.mallocZeroed(kBigZeroed);
  h.free(first);
  p = static_cast<char*>(h.mallocZeroed(kBigZeroed));
  ASSERT_EQ(static_cast<void*>(p), first) << "the block just freed, cleared again";
  std::memset(p + kBigZeroed, 0, Canaried::CanaryBytes);
}
}  // namespace

// A big zeroed object its parent cleared by writing (a reused block) gets its canary, so
// even an overflow of zeros over it is reported.
TEST_F(CanaryHeapDeathTest, AReusedBigZeroedObjectsZeroOverflowIsReported) {
  static Canaried h;
  char* p = nullptr;
  ASSERT_NO_FATAL_FAILURE(zeroOverflowOfAReusedZeroedObject(h, p));
  EXPECT_DEATH(h.free(p), "strata: overflow past the end of an object at 0x");
}

// The same on realloc: the header says the object got its canary, so zeros there are an
// overflow (a parent that could not say would let them pass from kLazyFrom bytes).
TEST_F(CanaryHeapDeathTest, AReusedBigZeroedObjectsZeroOverflowIsReportedOnResize) {
  static Canaried h;
  char* p = nullptr;
  ASSERT_NO_FATAL_FAILURE(zeroOverflowOfAReusedZeroedObject(h, p));
  EXPECT_DEATH((void)h.reallocInPlace(p, kBigZeroed / 2), "strata: overflow past the end of an object at 0x");
}

TEST_F(CanaryHeapDeathTest, OneByteOverflowIsReportedAtThatByte) {
  static Canaried h;
  auto* p = static_cast<char*>(h.malloc(40));
  p[40] = 0;  // the canary's first byte is zero: a terminating NUL changes nothing
  p[41] = 'A';
  char at[64];
  std::snprintf(at, sizeof at, "strata: overflow past the end of an object at %p\n",
                static_cast<void*>(p + 41));
  EXPECT_DEATH(h.free(p), at);
}

TEST_F(CanaryHeapDeathTest, OverflowIsReportedOnResize) {
  EXPECT_DEATH(
      {
        static Canaried h;
        auto* p = static_cast<char*>(h.malloc(5000));
        std::memset(p, 'A', 5000 + 8);
        (void)h.reallocInPlace(p, 6000);
      },
      "strata: overflow past the end of an object at 0x");
}

TEST_F(CanaryHeapDeathTest, OverflowOfALargeObjectIsReported) {
  EXPECT_DEATH(
      {
        static Canaried h;
        auto* p = static_cast<char*>(h.malloc(1u << 20));
        std::memset(p + (1u << 20), 'A', 64);
        h.free(p);
      },
      "strata: overflow past the end of an object at 0x");
}

// A canary copied from another live object (as an overflow that copies memory could) is
// another object's: reported.
TEST_F(CanaryHeapDeathTest, ACanaryCopiedFromAnotherObjectIsReported) {
  static Canaried h;
  auto* a = static_cast<char*>(h.malloc(40));
  auto* b = static_cast<char*>(h.malloc(40));
  std::memcpy(b + 40, a + 40, Canaried::CanaryBytes);
  EXPECT_DEATH(h.free(b), "strata: overflow past the end of an object at 0x");
}

TEST_F(CanaryHeapDeathTest, OverAParentThatDoesNotSealAnOverflowIsReported) {
  static CanariedUnsealed h;
  auto* p = static_cast<char*>(h.malloc(40));
  p[41] = 'A';
  char at[64];
  std::snprintf(at, sizeof at, "strata: overflow past the end of an object at %p\n",
                static_cast<void*>(p + 41));
  EXPECT_DEATH(h.free(p), at);
}

namespace {
// An object of h's of n bytes that starts a page, its header on the page below (the free's
// out-of-line path).
char* objectAtAPagesStart(Canaried& h, std::size_t n) {
  for (int i = 0; i < 100'000; ++i) {
    auto* p = static_cast<char*>(h.malloc(n));
    if ((reinterpret_cast<std::uintptr_t>(p) & 4095) == 0) return p;
  }
  return nullptr;
}
}  // namespace

TEST(CanaryHeap, AnObjectAtAPagesStartIsFreedAndReused) {
  static Canaried h;
  char* p = objectAtAPagesStart(h, 24);  // 48-byte blocks: one in three pages has one
  ASSERT_NE(p, nullptr);
  std::memset(p, 'x', 24);
  h.free(p);
  EXPECT_EQ(h.malloc(24), p) << "freed, and the block handed out again";
}

TEST_F(CanaryHeapDeathTest, AnObjectAtAPagesStartHasItsCanaryChecked) {
  static Canaried h;
  char* p = objectAtAPagesStart(h, 24);
  ASSERT_NE(p, nullptr);
  p[24] = 'A';
  EXPECT_DEATH(h.free(p), "strata: overflow past the end of an object at 0x");
}
