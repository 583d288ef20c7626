// HugeObjectHeap over a small test double for the objects below the threshold (a bump
// allocator in one segment of AccountedSegments): the threshold from tunables, routing of
// malloc and free by size and chunk kind, the huge chunk cache (reuse, its limits, zeroing
// on reuse), interior and double frees ignored, memalign up to big alignments,
// reallocInPlace, and trim dropping the cache.
#include <sys/mman.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>
#include <memory>

#include "strata/detail/align.hpp"
#include "strata/strata_heap/accounted_segments.hpp"
#include "strata/strata_heap/huge_object_heap.hpp"
#include "strata/top/segment_heap.hpp"

using namespace strata;

namespace {

// Objects up to MaxSize bump-allocated from one segment whose kind word marks it as ours;
// counts what HugeObjectHeap routes to it.
template <class Super>
class SmallObjects : public Super {
 public:
  static constexpr std::size_t MaxSmall = 1024;
  static constexpr std::size_t MaxSize = 64 << 10;
  using Super::Super;

  void* malloc(std::size_t n) noexcept {
    ++mallocs;
    if (segment_ == nullptr) {
      segment_ = Super::allocSegment();
      static_cast<std::uintptr_t*>(segment_)[kKindWord] = kKind;
    }
    void* p = static_cast<std::byte*>(segment_) + bump_;
    bump_ += detail::align_up(n == 0 ? 1 : n, 16);
    return p;
  }
  void* mallocZeroed(std::size_t n) noexcept {
    void* p = malloc(n);
    std::memset(p, 0, n);
    return p;
  }
  void* mallocAlignedIn(std::size_t align, std::size_t need) noexcept {
    return reinterpret_cast<void*>(detail::align_up(reinterpret_cast<std::uintptr_t>(malloc(need)), align));
  }
  static bool ownsChunk(void* chunk) noexcept {
    return static_cast<std::uintptr_t*>(chunk)[kKindWord] == kKind;
  }
  void freeIn(void*, void* p) noexcept {
    ++frees;
    lastFreed = p;
  }
  static std::size_t getSizeIn(void*, const void*) noexcept { return 16; }
  void trimHeaps() noexcept { ++trims; }

  int mallocs = 0, frees = 0, trims = 0;
  void* lastFreed = nullptr;

 private:
  static constexpr std::size_t kKindWord = Super::ChunkHeaderBytes / sizeof(std::uintptr_t);
  static constexpr std::uintptr_t kKind = 0x5111;
  void* segment_ = nullptr;
  std::size_t bump_ = 4096;
};

using Huge = HugeObjectHeap<SmallObjects<AccountedSegments<SegmentHeap<>>>>;
constexpr std::size_t MiB = std::size_t{1} << 20;
constexpr std::size_t kSeg = Huge::SegmentSize;

std::unique_ptr<Huge> makeHeap(std::size_t threshold = 0, std::size_t chunks = 16,
                               std::size_t bytes = 256 * MiB) {
  StrataTunables t;
  t.hugeThreshold = threshold;
  t.hugeCacheChunks = chunks;
  t.hugeCacheBytes = bytes;
  return std::make_unique<Huge>(t);
}

}  // namespace

TEST(HugeObjectHeap, ThresholdFromTunables) {
  EXPECT_EQ(makeHeap()->threshold(), Huge::MaxSize) << "0: the largest Super takes";
  EXPECT_EQ(makeHeap(16 << 10)->threshold(), 16u << 10);
  EXPECT_EQ(makeHeap(MiB)->threshold(), Huge::MaxSize) << "above MaxSize changes nothing";
  EXPECT_EQ(makeHeap(100)->threshold(), Huge::MaxSmall) << "never below the small classes";
  auto h = makeHeap(16 << 10);
  void* at = h->malloc(16 << 10);
  EXPECT_EQ(h->mallocs, 1);
  void* above = h->malloc((16 << 10) + 1);
  EXPECT_EQ(h->mallocs, 1) << "above the threshold: a chunk of its own";
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(above) % kSeg, 64u) << "after a 64-byte header";
  EXPECT_GE(h->getSize(above), (16u << 10) + 1);
  h->free(at);
  EXPECT_EQ(h->frees, 1);
  EXPECT_EQ(h->lastFreed, at);
  h->free(above);
  EXPECT_EQ(h->frees, 1) << "routed by chunk kind, not to Super";
}

TEST(HugeObjectHeap, SmallRequestsNeverGetAChunkWhateverTheThreshold) {
  auto h = makeHeap(100);
  void* a = h->malloc(800);
  void* z = h->mallocZeroed(800);
  void* m = h->memalign(64, 800);
  EXPECT_EQ(h->mallocs, 3);
  EXPECT_EQ(h->committed(), 0u) << "no huge chunk was made";
  h->free(a);
  h->free(z);
  h->free(m);
}

TEST(HugeObjectHeap, BooksAndTheCache) {
  auto h = makeHeap();
  void* p = h->malloc(MiB);
  ASSERT_NE(p, nullptr);
  const std::size_t len = Huge::chunkSize(h->chunkOf(p));
  EXPECT_EQ(h->committed(), len);
  EXPECT_EQ(h->stats().bytesInUse, len - 64);
  std::memset(p, 0xAB, MiB);
  h->free(p);
  EXPECT_EQ(h->stats().bytesInUse, 0u);
  EXPECT_EQ(h->committed(), len) << "cached, still committed";
  EXPECT_EQ(h->getSize(p), 0u) << "freed";
  void* q = h->malloc(MiB - 4096);
  EXPECT_EQ(q, p) << "the cached chunk is reused";
  EXPECT_EQ(h->committed(), len);
  h->free(q);
  void* z = h->mallocZeroed(MiB);
  ASSERT_EQ(z, p);
  for (std::size_t i = 0; i < MiB; i += 1024) ASSERT_EQ(static_cast<unsigned char*>(z)[i], 0) << i;
  EXPECT_EQ(static_cast<unsigned char*>(z)[MiB - 1], 0);
  h->free(z);
}

// calloc of a reused chunk hands its pages back rather than writing them: what the earlier
// object made resident is not resident any more, it reads as zero, and the books still count
// the chunk as committed.
TEST(HugeObjectHeap, CallocOfAReusedChunkLeavesItsPagesUntouched) {
  auto h = makeHeap();
  constexpr std::size_t n = 16 * MiB;
  void* p = h->malloc(n);
  ASSERT_NE(p, nullptr);
  std::memset(p, 0xCD, n);
  const std::size_t committed = h->committed();
  h->free(p);
  auto* z = static_cast<unsigned char*>(h->mallocZeroed(n - 100));
  ASSERT_EQ(static_cast<void*>(z), p) << "the cached chunk is reused";
  EXPECT_EQ(h->committed(), committed);
  const std::uintptr_t first = (reinterpret_cast<std::uintptr_t>(z) + 4095) & ~std::uintptr_t{4095};
  const std::size_t pages = (n - 2 * 4096) / 4096;
  std::vector<unsigned char> resident(pages);
  ASSERT_EQ(::mincore(reinterpret_cast<void*>(first), pages * 4096, resident.data()), 0);
  std::size_t residentPages = 0;
  for (unsigned char r : resident) residentPages += r & 1;
  EXPECT_EQ(residentPages, 0u) << "calloc wrote pages the program has not touched";
  for (std::size_t i = 0; i < n - 100; i += 4093) ASSERT_EQ(z[i], 0) << i;
  EXPECT_EQ(z[0], 0);
  EXPECT_EQ(z[n - 101], 0);
  h->free(z);
}

// A cached chunk much longer than the request is reused with its tail decommitted, so the
// committed bytes follow the request; one not much longer is reused as it is.
TEST(HugeObjectHeap, ALongCachedChunkIsReusedWithItsTailDecommitted) {
  auto h = makeHeap();
  void* p = h->malloc(16 * MiB);
  const std::size_t full = h->committed();
  h->free(p);
  void* small = h->malloc(MiB);
  EXPECT_EQ(small, p) << "the cached chunk, not a new mapping";
  EXPECT_LT(h->committed(), full / 8) << "its tail beyond the request went back";
  std::memset(small, 1, MiB);
  h->free(small);
  void* again = h->malloc(12 * MiB);
  EXPECT_EQ(again, p);
  std::memset(again, 2, 12 * MiB);
  EXPECT_GE(h->committed(), 12 * MiB) << "committed again as the request needs";
  h->free(again);
}

// A cached chunk shorter than the request is grown by moving its pages, contents kept.
TEST(HugeObjectHeap, AShortCachedChunkIsGrown) {
  auto h = makeHeap();
  auto* p = static_cast<unsigned char*>(h->malloc(5 * MiB));
  std::memset(p, 7, 5 * MiB);
  h->free(p);
  auto* q = static_cast<unsigned char*>(h->malloc(20 * MiB));
  ASSERT_NE(q, nullptr);
  EXPECT_GE(h->getSize(q), 20 * MiB);
  std::memset(q, 8, 20 * MiB);
  EXPECT_EQ(h->chunkOf(q + 20 * MiB - 1), h->chunkOf(q)) << "the grown chunk is registered whole";
  h->free(q);
}

// realloc growth of a huge object moves pages (mremap) and keeps every byte.
TEST(HugeObjectHeap, ReallocMovingKeepsTheContents) {
  auto h = makeHeap();
  auto* p = static_cast<unsigned char*>(h->malloc(6 * MiB));
  for (std::size_t i = 0; i < 6 * MiB; i += 4096) p[i] = static_cast<unsigned char>(i >> 12);
  auto* q = static_cast<unsigned char*>(h->reallocMoving(p, 40 * MiB));
  ASSERT_NE(q, nullptr);
  for (std::size_t i = 0; i < 6 * MiB; i += 4096) ASSERT_EQ(q[i], static_cast<unsigned char>(i >> 12));
  EXPECT_GE(h->getSize(q), 40 * MiB);
  std::memset(q + 6 * MiB, 3, 34 * MiB);
  EXPECT_EQ(h->reallocMoving(q, MiB), nullptr) << "not a growth";
  int local = 0;
  EXPECT_EQ(h->reallocMoving(&local, 40 * MiB), nullptr) << "not a huge object";
  h->free(q);
  EXPECT_EQ(h->stats().bytesInUse, 0u);
}

TEST(HugeObjectHeap, CacheLimits) {
  auto h = makeHeap(0, 1, 16 * MiB);
  void* a = h->malloc(MiB);
  void* b = h->malloc(MiB);
  const std::size_t len = Huge::chunkSize(h->chunkOf(b));
  h->free(a);
  EXPECT_EQ(h->committed(), 2 * len);
  h->free(b);
  EXPECT_EQ(h->committed(), len) << "one chunk at most: the second went back";
  auto bytes = makeHeap(0, 16, 8 * MiB);
  void* big = bytes->malloc(9 * MiB);
  bytes->free(big);
  EXPECT_EQ(bytes->committed(), 0u) << "more committed bytes than the cache holds: not kept";
  auto none = makeHeap(0, 0);
  void* c = none->malloc(MiB);
  none->free(c);
  EXPECT_EQ(none->committed(), 0u);
}

TEST(HugeObjectHeap, InteriorForeignAndDoubleFreesAreIgnored) {
  auto h = makeHeap();
  void* p = h->malloc(MiB);
  const std::size_t committed = h->committed();
  h->free(static_cast<char*>(p) + 16);
  h->free(static_cast<char*>(p) + MiB / 2);
  EXPECT_EQ(h->getSize(static_cast<char*>(p) + 16), 0u);
  EXPECT_GE(h->getSize(p), MiB) << "still live";
  EXPECT_EQ(h->stats().bytesInUse, committed - 64);
  int local = 0;
  h->free(&local);
  h->free(nullptr);
  EXPECT_EQ(h->getSize(&local), 0u);
  EXPECT_EQ(h->frees, 0);
  h->free(p);
  h->free(p);  // the second is ignored: the chunk is cached once
  void* a = h->malloc(MiB);
  void* b = h->malloc(MiB);
  EXPECT_EQ(a, p);
  EXPECT_NE(b, p);
  h->free(a);
  h->free(b);
}

TEST(HugeObjectHeap, MemalignWithBigAlignments) {
  auto h = makeHeap();
  void* s = h->memalign(32, 100);
  EXPECT_TRUE(detail::is_aligned(s, 32));
  void* page = h->memalign(4096, 1000);
  EXPECT_TRUE(detail::is_aligned(page, 4096));
  EXPECT_EQ(h->mallocs, 2) << "both fit in Super";
  for (std::size_t align = 128 << 10; align <= std::size_t{64} << 20; align *= 4) {
    void* p = h->memalign(align, 100);
    ASSERT_NE(p, nullptr) << align;
    EXPECT_TRUE(detail::is_aligned(p, align)) << align;
    EXPECT_GE(h->getSize(p), 100u);
    std::memset(p, 1, 100);
    h->free(p);
    EXPECT_EQ(h->getSize(p), 0u);
  }
  errno = 0;
  EXPECT_EQ(h->memalign(48, 10), nullptr);
  EXPECT_EQ(errno, EINVAL);
  errno = 0;
  EXPECT_EQ(h->memalign(std::size_t{2} << 30, 10), nullptr);
  EXPECT_EQ(errno, EINVAL);
  h->trim();
}

TEST(HugeObjectHeap, ReallocInPlace) {
  auto h = makeHeap();
  void* p = h->malloc(MiB);
  EXPECT_EQ(h->reallocInPlace(p, MiB - 1000), p);
  EXPECT_EQ(h->reallocInPlace(p, h->getSize(p)), p);
  EXPECT_EQ(h->reallocInPlace(p, h->getSize(p) + 1), nullptr);
  EXPECT_EQ(h->reallocInPlace(p, 1000), nullptr) << "small now: moving saves memory";
  int local = 0;
  EXPECT_EQ(h->reallocInPlace(&local, 4), nullptr);
  h->free(p);
}

// A huge object shrunk but still huge is cut where it is: same address, contents kept, the
// pages past its new end unmapped and out of the books; shrunk to a small size, it moves.
TEST(HugeObjectHeap, ShrinkingAHugeObjectCutsItsChunkInPlace) {
  auto h = makeHeap();
  const std::size_t big = 64 * MiB;
  auto* p = static_cast<unsigned char*>(h->malloc(big));
  ASSERT_NE(p, nullptr);
  for (std::size_t i = 0; i < 3 * MiB; i += 4096) p[i] = static_cast<unsigned char>(i >> 12);
  void* chunk = h->chunkOf(p);
  const std::size_t committed = h->committed(), inUse = h->stats().bytesInUse;
  const std::size_t n = 3 * MiB + 100;
  ASSERT_GT(n, h->threshold());
  EXPECT_EQ(h->reallocInPlace(p, n), p);
  const std::size_t kept = Huge::chunkSize(chunk);
  EXPECT_EQ(kept, detail::align_up(n + 64, std::size_t{4096}));
  EXPECT_EQ(h->getSize(p), kept - 64);
  EXPECT_EQ(h->committed(), committed - (64 * MiB + 4096 - kept));
  EXPECT_EQ(h->stats().bytesInUse, inUse - (64 * MiB + 4096 - kept));
  for (std::size_t i = 0; i < 3 * MiB; i += 4096)
    ASSERT_EQ(p[i], static_cast<unsigned char>(i >> 12)) << i;
  unsigned char resident = 0;
  errno = 0;
  EXPECT_EQ(::mincore(static_cast<unsigned char*>(chunk) + kept, 4096, &resident), -1);
  EXPECT_EQ(errno, ENOMEM) << "the page past the new end is still mapped";
  EXPECT_EQ(h->chunkOf(static_cast<unsigned char*>(chunk) + 32 * MiB), nullptr)
      << "a segment past the new end is still in the map";
  EXPECT_EQ(h->chunkOf(p + n - 1), chunk);
  EXPECT_EQ(h->reallocInPlace(p, n - 10), p) << "within the last page: nothing to cut";
  EXPECT_EQ(Huge::chunkSize(chunk), kept);
  EXPECT_EQ(h->reallocInPlace(p, 1000), nullptr) << "small now: moving saves memory";
  h->free(p);
  EXPECT_EQ(h->stats().bytesInUse, 0u);
  h->trim();
  EXPECT_EQ(h->committed(), 0u);
}

TEST(HugeObjectHeap, TrimDropsTheCache) {
  auto h = makeHeap();
  EXPECT_EQ(h->trim(), 0);
  void* a = h->malloc(MiB);
  void* b = h->malloc(2 * MiB);
  h->free(a);
  h->free(b);
  EXPECT_GT(h->committed(), 0u);
  EXPECT_EQ(h->trim(), 1);
  EXPECT_EQ(h->committed(), 0u);
  EXPECT_EQ(h->trims, 2) << "Super's heaps were trimmed too";
  void* c = h->malloc(MiB);
  const std::size_t len = Huge::chunkSize(h->chunkOf(c));
  EXPECT_EQ(h->committed(), len) << "a new chunk";
  h->free(c);
}
