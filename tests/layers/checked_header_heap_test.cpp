// CheckedHeaderHeap: objects and their exact sizes survive the randomised differential
// harness over StrataHeap and over the C library's malloc; every misuse the header can see
// (a double free, a free of an interior, misaligned, stack or damaged-header pointer, a
// realloc or size query of a freed object) stops the process with its one-line report naming
// the address; the parent's own allocation paths are wrapped or hidden.
#include "strata/hardening/checked_header_heap.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "strata/general/strata_heap.hpp"
#include "strata/general/lea_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "common/differential.hpp"

using namespace strata;

using Checked = CheckedHeaderHeap<StrataHeap>;
using CheckedMalloc = CheckedHeaderHeap<MallocHeap>;
static_assert(ExactSizedHeap<Checked> && Checked::Alignment == 16);
static_assert(OwningHeap<StrataHeap> && !OwningHeap<MallocHeap>);
static_assert(ResizesInPlace<Checked> && ZeroingHeap<Checked> && MovingHeap<Checked>);
static_assert(!ResizesInPlace<CheckedMalloc> && !ZeroingHeap<CheckedMalloc>,
              "only what the parent has is wrapped");
static_assert(BinnedHeap<LeaHeap<>> && !BinnedHeap<CheckedHeaderHeap<LeaHeap<>>>,
              "allocating from the parent's bins would skip the header");

namespace {

// The report a misuse at p must end in: the kind, then p as the layer prints it ("0x" and
// lower-case hex, as %p does). The misuse runs in a child forked from the test, so the
// address is the one the test computed.
std::string report(const char* kind, const void* p) {
  char s[32];
  std::snprintf(s, sizeof s, "%p", p);
  return std::string("strata: ") + kind + " at " + s + "\n";
}

}  // namespace

TEST(CheckedHeaderHeap, DifferentialOverStrataHeap) {
  test::expectEverythingReturned<Checked>({.seed = 31, .ops = 400'000});
}

TEST(CheckedHeaderHeap, DifferentialOverMalloc) {
  test::expectEverythingReturned<CheckedMalloc>({.seed = 32, .ops = 200'000});
}

TEST(CheckedHeaderHeap, SizesAreExactAndObjectsAligned) {
  auto h = std::make_unique<Checked>();
  for (std::size_t n : {0u, 1u, 15u, 16u, 17u, 100u, 4096u, 100'000u, 3u << 20}) {
    void* p = h->malloc(n);
    ASSERT_NE(p, nullptr) << n;
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 16, 0u);
    EXPECT_EQ(h->getSize(p), n);
    std::memset(p, 0x5a, n);
    h->free(p);
  }
}

TEST(CheckedHeaderHeap, AlignedObjectsKeepTheirHeaderAndSize) {
  auto h = std::make_unique<Checked>();
  for (std::size_t align : {32u, 64u, 4096u, 1u << 20}) {
    void* p = h->memalign(align, 100);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % align, 0u) << align;
    EXPECT_EQ(h->getSize(p), 100u);
    std::memset(p, 1, 100);
    h->free(p);
  }
  errno = 0;
  EXPECT_EQ(h->memalign(48, 10), nullptr);
  EXPECT_EQ(errno, EINVAL);
}

TEST(CheckedHeaderHeap, ZeroedAndResizedObjects) {
  auto h = std::make_unique<Checked>();
  auto* z = static_cast<unsigned char*>(h->mallocZeroed(5000));
  ASSERT_NE(z, nullptr);
  for (std::size_t i = 0; i < 5000; ++i) ASSERT_EQ(z[i], 0) << i;
  EXPECT_EQ(h->getSize(z), 5000u);
  // A shrink in place keeps the object and records the new size.
  EXPECT_EQ(h->reallocInPlace(z, 3000), z);
  EXPECT_EQ(h->getSize(z), 3000u);
  h->free(z);
}

TEST(CheckedHeaderHeap, TooLargeIsENOMEM) {
  auto h = std::make_unique<Checked>();
  errno = 0;
  EXPECT_EQ(h->malloc(Checked::MaxSize + 1), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_EQ(h->malloc(SIZE_MAX), nullptr);
}

using CheckedHeaderHeapDeathTest = ::testing::Test;

TEST_F(CheckedHeaderHeapDeathTest, DoubleFreeIsReported) {
  static Checked h;
  void* p = h.malloc(24);
  h.free(p);
  EXPECT_DEATH(h.free(p), report("double free", p));
}

TEST_F(CheckedHeaderHeapDeathTest, DoubleFreeOfAnAlignedObjectIsReported) {
  EXPECT_DEATH(
      {
        static Checked h;
        void* p = h.memalign(256, 1000);
        h.free(p);
        h.free(p);
      },
      "strata: double free at 0x");
}

TEST_F(CheckedHeaderHeapDeathTest, InteriorPointerIsReported) {
  static Checked h;
  auto* p = static_cast<char*>(h.malloc(200));
  std::memset(p, 0, 200);
  EXPECT_DEATH(h.free(p + 64), report("invalid free or damaged header", p + 64));
}

TEST_F(CheckedHeaderHeapDeathTest, MisalignedPointerIsReported) {
  EXPECT_DEATH(
      {
        static Checked h;
        auto* p = static_cast<char*>(h.malloc(64));
        h.free(p + 8);
      },
      "strata: invalid free or damaged header at 0x");
}

// Within the array, so the 16 bytes below it are the array's (reading them is allowed): the
// seal does not match and the parent does not own the address.
TEST_F(CheckedHeaderHeapDeathTest, StackPointerIsReportedAsForeign) {
  static Checked h;
  alignas(16) char local[64] = {};
  EXPECT_DEATH(h.free(local + 32), report("free of a pointer not from this heap", local + 32));
}

TEST_F(CheckedHeaderHeapDeathTest, UnderflowIntoTheHeaderIsReportedOnFree) {
  EXPECT_DEATH(
      {
        static Checked h;
        auto* p = static_cast<char*>(h.malloc(100));
        p[-3] ^= 0x40;  // one bit of the header's seal
        h.free(p);
      },
      "strata: invalid free or damaged header at 0x");
}

// A write that knows the header's layout but not the seal rewrites the size and the offset
// together, leaving the seal's own bytes as they were: the seal must still not match (were
// both words mixed into one input, a size one larger and an offset 1,024 units larger
// could cancel, and the free would hand the parent a block 16 KiB below).
TEST_F(CheckedHeaderHeapDeathTest, SizeAndOffsetRewrittenTogetherAreReported) {
  EXPECT_DEATH(
      {
        static Checked h;
        auto* p = static_cast<char*>(h.malloc(100));
        auto* words = reinterpret_cast<std::uint64_t*>(p - Checked::HeaderSize);
        words[0] ^= 1;     // the size: 100 becomes 101
        words[1] ^= 1024;  // the offset's low half: 1 unit becomes 1,025
        h.free(p);
      },
      "strata: invalid free or damaged header at 0x");
}

TEST_F(CheckedHeaderHeapDeathTest, ResizeOrSizeOfAFreedObjectIsReported) {
  EXPECT_DEATH(
      {
        static Checked h;
        void* p = h.malloc(100);
        h.free(p);
        (void)h.reallocInPlace(p, 50);
      },
      "strata: double free at 0x");
  EXPECT_DEATH(
      {
        static Checked h;
        void* p = h.malloc(100);
        h.free(p);
        (void)h.getSize(p);
      },
      "strata: double free at 0x");
}

// Over a parent that cannot say what it owns, a foreign pointer is still caught by its
// missing seal (the memory below it is read: here, the rest of a stack array).
TEST_F(CheckedHeaderHeapDeathTest, ForeignPointerOverMallocHasNoSeal) {
  EXPECT_DEATH(
      {
        static CheckedMalloc h;
        alignas(16) char local[64] = {};
        char* p = local + 32;
        asm("" : "+r"(p));  // opaque: the compiler may not see the free reach a stack array
        h.free(p);
      },
      "strata: invalid free or damaged header at 0x");
}
