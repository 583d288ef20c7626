#include <gtest/gtest.h>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <memory>

#include "strata/top/memory_account.hpp"
#include "strata/top/segment_heap.hpp"

using namespace strata;

using Seg = SegmentHeap<>;
static_assert(Heap<Seg> && Seg::Alignment == Seg::SegmentSize);

TEST(SegmentHeap, ChunksAreAlignedAndFoundFromAnyInteriorAddress) {
  auto h = std::make_unique<Seg>();
  for (std::size_t n : {std::size_t{1}, std::size_t{4096}, Seg::SegmentSize,
                        Seg::SegmentSize * 3 + 5}) {
    void* p = h->malloc(n);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(detail::is_aligned(p, Seg::SegmentSize));
    EXPECT_GE(Seg::getSize(p), n);
    auto* b = static_cast<char*>(p);
    const std::size_t len = Seg::getSize(p);
    ASSERT_GE(len, 4096u);
    std::memset(b + len - 4096, 1, 4096);
    b[Seg::HeaderBytes] = 1;
    EXPECT_EQ(h->chunkOf(b), p);
    EXPECT_EQ(h->chunkOf(b + len - 1), p);
    EXPECT_EQ(h->chunkOf(b + len / 2), p);
    h->free(p);
    EXPECT_EQ(h->chunkOf(b + len / 2), n <= Seg::SegmentSize ? p : nullptr)
        << "single segments are cached (still ours), bigger chunks are unmapped";
  }
}

TEST(SegmentHeap, ForeignAddressesAreNotOurs) {
  auto h = std::make_unique<Seg>();
  int local = 0;
  EXPECT_EQ(h->chunkOf(&local), nullptr);
  EXPECT_EQ(h->chunkOf(nullptr), nullptr);
  EXPECT_EQ(h->chunkOf(reinterpret_cast<void*>(~std::uintptr_t{0} - 100)), nullptr);
  void* p = h->malloc(100);
  Seg other;
  EXPECT_EQ(other.chunkOf(p), nullptr);
  h->free(static_cast<char*>(p) + 16);  // not a chunk base: ignored
  EXPECT_EQ(h->chunkOf(p), p);
  h->free(p);
}

TEST(SegmentHeap, AlignedChunksUpTo1GiB) {
  auto h = std::make_unique<Seg>();
  for (std::size_t align = Seg::SegmentSize; align <= (std::size_t{1} << 30); align *= 4) {
    void* base = h->mallocAligned(1 << 20, align, 0);
    ASSERT_NE(base, nullptr);
    EXPECT_TRUE(detail::is_aligned(base, align));
    h->free(base);
    void* shifted = h->mallocAligned(Seg::SegmentSize + 4096, align, Seg::SegmentSize);
    ASSERT_NE(shifted, nullptr);
    EXPECT_TRUE(detail::is_aligned(static_cast<char*>(shifted) + Seg::SegmentSize, align));
    EXPECT_EQ(h->chunkOf(static_cast<char*>(shifted) + Seg::SegmentSize), shifted);
    h->free(shifted);
  }
}

TEST(SegmentHeap, HugeRequestsFail) {
  auto h = std::make_unique<Seg>();
  for (std::size_t n : {SIZE_MAX, SIZE_MAX - 4096, std::size_t{1} << 50}) {
    errno = 0;
    EXPECT_EQ(h->malloc(n), nullptr);
    EXPECT_EQ(errno, ENOMEM);
    errno = 0;
    EXPECT_EQ(h->mallocAligned(n, std::size_t{1} << 30, 0), nullptr);
    EXPECT_EQ(errno, ENOMEM);
  }
}

// Chunks are accounted mappings, as glibc's are: under the kernel's default (heuristic) or
// strict overcommit policy a chunk larger than RAM and swap together is refused at once, as
// glibc's malloc is, instead of registering terabytes of address space segment by segment.
TEST(SegmentHeap, ChunksBeyondWhatTheKernelWouldEverCommitAreRefused) {
  FILE* f = std::fopen("/proc/sys/vm/overcommit_memory", "r");
  int mode = -1;
  if (f != nullptr) {
    if (std::fscanf(f, "%d", &mode) != 1) mode = -1;
    std::fclose(f);
  }
  if (mode != 0 && mode != 2) GTEST_SKIP() << "overcommit_memory is " << mode << ": the kernel grants any mapping";
  auto h = std::make_unique<Seg>();
  const std::size_t pages = static_cast<std::size_t>(::sysconf(_SC_PHYS_PAGES));
  const std::size_t beyond = pages * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)) * 4 + (std::size_t{1} << 40);
  errno = 0;
  EXPECT_EQ(h->malloc(beyond), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_EQ(h->bytesHeld(), 0u);
  void* modest = h->malloc(std::size_t{64} << 20);
  EXPECT_NE(modest, nullptr) << "an ordinary chunk is still granted";
  h->free(modest);
}

TEST(SegmentHeap, CacheReusesSegmentsAndTrimUnmapsThem) {
  const std::size_t before = processAccount().held();
  {
    auto h = std::make_unique<Seg>();
    void* a = h->malloc(100);
    std::memset(static_cast<char*>(a) + 4096, 7, 4096);
    h->free(a);
    void* b = h->malloc(100);
    EXPECT_EQ(b, a) << "a freed segment is reused from the cache";
    EXPECT_EQ(static_cast<unsigned char*>(b)[4096], 0) << "cached segments are decommitted";
    h->free(b);
    EXPECT_EQ(h->bytesHeld(), Seg::SegmentSize);
    EXPECT_EQ(h->trim(), Seg::SegmentSize);
    EXPECT_EQ(h->bytesHeld(), 0u);
    EXPECT_EQ(h->chunkOf(b), nullptr);
    void* kept = h->malloc(Seg::SegmentSize * 2);
    ASSERT_NE(kept, nullptr);
    EXPECT_GT(processAccount().held(), before);
  }
  EXPECT_EQ(processAccount().held(), before) << "the destructor unmaps what is left";
}
