// MallocShim<H> called directly, as functions, over test heaps: no preloading, so these run
// under the sanitizers too. Each heap type gets its own process-wide instance.
#include "strata/shim/malloc_shim.hpp"
#include "strata/detail/poison.hpp"
#include "strata/platform/page.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "strata/combining/select_mmap_heap.hpp"
#include "strata/general/kingsley_heap.hpp"
#include "strata/general/lea_heap.hpp"
#include "strata/representation/size_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/mmap_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/utility/fork_safe_heap.hpp"
#include "common/blocked_thread.hpp"
#include "common/differential.hpp"
#include "../../layers/malloc/lea_malloc_heap.hpp"

using namespace strata;

namespace {

// Fails every request while `failing` is set (with ENOMEM, as a heap out of memory does).
template <Heap Super>
class SwitchableHeap : public Super {
 public:
  static constexpr std::size_t Alignment = Super::Alignment;
  static inline std::atomic<bool> failing{false};
  void* malloc(std::size_t n) noexcept {
    if (failing.load()) {
      errno = ENOMEM;
      return nullptr;
    }
    return Super::malloc(n);
  }
};

// A heap without memalign whose blocks come from the C library (so the sanitizers see every
// byte the shim touches), with SizeHeap's header word below each object.
using PlainHeap = ForkSafeHeap<SizeHeap<SwitchableHeap<MallocHeap>>>;
using Plain = MallocShim<PlainHeap>;

// The compositions of libstrata-kingsley.so and libstrata-lea.so, on smaller reservations.
using KingsleyComposition = ForkSafeHeap<
    SelectMmapHeap<std::size_t{128} << 10, KingsleyHeap<SbrkHeap<std::size_t{4} << 30>>,
                   MmapHeap, true>>;
using LeaComposition = ForkSafeHeap<LeaMallocHeap<SbrkHeap<std::size_t{4} << 30>>>;
using Lea = MallocShim<LeaComposition>;
static_assert(Lea::kNativeReallocInPlace);

// A heap with every optional member, counting the calls the shim makes to it.
struct NativeHeap {
  [[maybe_unused]] static constexpr std::size_t Alignment = 16;
  static inline std::atomic<int> memaligns{0}, inPlace{0}, trims{0}, forkCalls{0};
  static inline std::size_t lastTrimPad = 0;
  void* malloc(std::size_t n) noexcept { return std::malloc(n); }
  void free(void* p) noexcept { std::free(p); }
  std::size_t getSize(void* p) noexcept { return ::malloc_usable_size(p); }
  void* memalign(std::size_t align, std::size_t n) noexcept {
    ++memaligns;
    return std::aligned_alloc(align, detail::align_up(n, align));
  }
  void* reallocInPlace(void* p, std::size_t n) noexcept {
    ++inPlace;
    return n <= ::malloc_usable_size(p) ? p : nullptr;
  }
  int trim(std::size_t pad) noexcept {
    ++trims;
    lastTrimPad = pad;
    return 1;
  }
  MallocStats stats() noexcept { return {1000, 300, 5000}; }
  void prepareFork() noexcept { ++forkCalls; }
  void parentAfterFork() noexcept { ++forkCalls; }
  void childAfterFork() noexcept { ++forkCalls; }
};
using Native = MallocShim<NativeHeap>;

static_assert(MallocShimHeap<PlainHeap> && MallocShimHeap<NativeHeap>);
static_assert(!MallocShimHeap<SbrkHeap<>>);  // no getSize
static_assert(!Plain::kNativeMemalign && Native::kNativeMemalign);
static_assert(!Plain::kNativeReallocInPlace && Native::kNativeReallocInPlace);

bool aligned(const void* p, std::size_t a) {
  return (reinterpret_cast<std::uintptr_t>(p) & (a - 1)) == 0;
}

std::size_t inUse() { return Plain::heap().stats().bytesInUse; }

// Restores the switch even when a test fails half-way.
struct Failing {
  Failing() { SwitchableHeap<MallocHeap>::failing = true; }
  ~Failing() { SwitchableHeap<MallocHeap>::failing = false; }
};

}  // namespace

TEST(MallocShim, MallocZeroGivesUniqueFreeablePointers) {
  const std::size_t before = inUse();
  std::vector<void*> ps;
  for (int i = 0; i < 100; ++i) {
    void* p = Plain::malloc(0);
    ASSERT_NE(p, nullptr);
    for (void* q : ps) ASSERT_NE(p, q);
    ps.push_back(p);
  }
  for (void* p : ps) Plain::free(p);
  EXPECT_EQ(inUse(), before);
}

TEST(MallocShim, AlignmentAndUsableSize) {
  for (std::size_t n : {1u, 15u, 16u, 17u, 100u, 4096u, 100000u}) {
    void* p = Plain::malloc(n);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(aligned(p, 16));
    const std::size_t usable = Plain::malloc_usable_size(p);
    EXPECT_GE(usable, n);
    std::memset(p, 0x5A, usable);
    Plain::free(p);
  }
  EXPECT_EQ(Plain::malloc_usable_size(nullptr), 0u);
  Plain::free(nullptr);
}

TEST(MallocShim, HugeRequestsFailWithEnomem) {
  for (std::size_t n : {SIZE_MAX, SIZE_MAX - 15, std::size_t{PTRDIFF_MAX} + 1}) {
    errno = 0;
    EXPECT_EQ(Plain::malloc(n), nullptr);
    EXPECT_EQ(errno, ENOMEM);
    errno = 0;
    EXPECT_EQ(Plain::memalign(64, n), nullptr);
    EXPECT_EQ(errno, ENOMEM);
  }
  errno = 0;
  EXPECT_EQ(Plain::calloc(SIZE_MAX / 2, 3), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(Plain::calloc(std::size_t{1} << 32, std::size_t{1} << 32), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(Plain::reallocarray(nullptr, SIZE_MAX, 2), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(Plain::pvalloc(SIZE_MAX), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(Plain::aligned_alloc(4096, SIZE_MAX - 100), nullptr);
  EXPECT_EQ(errno, ENOMEM);
}

TEST(MallocShim, HeapFailureSetsEnomem) {
  Failing failing;
  errno = 0;
  EXPECT_EQ(Plain::malloc(10), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(Plain::calloc(10, 10), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(Plain::memalign(256, 10), nullptr);
  EXPECT_EQ(errno, ENOMEM);
}

TEST(MallocShim, CallocZeroes) {
  for (std::size_t n : {1u, 100u, 5000u}) {
    void* dirty = Plain::malloc(n);
    std::memset(dirty, 0xFF, n);
    Plain::free(dirty);
    auto* p = static_cast<unsigned char*>(Plain::calloc(n, 1));
    ASSERT_NE(p, nullptr);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(p[i], 0) << i;
    Plain::free(p);
  }
}

TEST(MallocShim, CallocZeroesRecycledAndMappedBlocks) {
  using Kingsley = MallocShim<KingsleyComposition>;
  // 300000 is mapped the first time; once freed, the threshold rises past it and the next
  // one comes dirty from a Kingsley bin.
  for (int round = 0; round < 3; ++round) {
    for (std::size_t n : {100u, 300000u, 2000000u}) {
      void* dirty = Kingsley::malloc(n);
      ASSERT_NE(dirty, nullptr);
      std::memset(dirty, 0xEE, n);
      Kingsley::free(dirty);
      auto* p = static_cast<unsigned char*>(Kingsley::calloc(n, 1));
      ASSERT_NE(p, nullptr);
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(p[i], 0) << n << " at " << i;
      Kingsley::free(p);
    }
  }
}

TEST(MallocShim, CarvedAlignedObjectsAreMarkedAndFreedWhole) {
  const std::size_t before = inUse();
  int marked = 0;
  for (std::size_t a = 32; a <= (std::size_t{1} << 20); a <<= 1) {
    for (std::size_t n : {std::size_t{1}, std::size_t{100}, a, 3 * a}) {
      void* p = Plain::memalign(a, n);
      ASSERT_NE(p, nullptr);
      ASSERT_TRUE(aligned(p, a)) << a;
      const std::size_t usable = Plain::malloc_usable_size(p);
      EXPECT_GE(usable, n);
      std::memset(p, 0x11, usable);  // the whole usable size lies inside the block
      if ((detail::header_word(p) & detail::kFlagMask) == Plain::kAlignedMark) ++marked;
      Plain::free(p);
    }
  }
  EXPECT_GT(marked, 0);
  EXPECT_EQ(inUse(), before) << "a carved object did not give its whole block back";
}

TEST(MallocShim, OneGibAlignment) {
  void* p = nullptr;
  ASSERT_EQ(Plain::posix_memalign(&p, std::size_t{1} << 30, 64), 0);
  EXPECT_TRUE(aligned(p, std::size_t{1} << 30));
  std::memset(p, 1, 64);
  Plain::free(p);
}

TEST(MallocShim, PosixMemalignReportsErrorsWithoutErrno) {
  void* p = &p;
  for (std::size_t a : {0u, 1u, 3u, 4u, 12u, 24u, 100u}) {
    errno = 77;
    EXPECT_EQ(Plain::posix_memalign(&p, a, 10), EINVAL) << a;
    EXPECT_EQ(errno, 77);
  }
  EXPECT_EQ(p, &p);
  {
    Failing failing;
    errno = 77;
    EXPECT_EQ(Plain::posix_memalign(&p, 64, 10), ENOMEM);
    EXPECT_EQ(errno, 77);
    EXPECT_EQ(Plain::posix_memalign(&p, 8, 10), ENOMEM);
    EXPECT_EQ(errno, 77);
  }
  EXPECT_EQ(p, &p);
  ASSERT_EQ(Plain::posix_memalign(&p, 8, 10), 0);
  Plain::free(p);
}

TEST(MallocShim, AlignedAllocMemalignVallocPvalloc) {
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  void* p = Plain::aligned_alloc(4096, 10);  // (alignment, size)
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(aligned(p, 4096));
  EXPECT_GE(Plain::malloc_usable_size(p), 10u);
  Plain::free(p);
  errno = 0;
  EXPECT_EQ(Plain::aligned_alloc(48, 10), nullptr);
  EXPECT_EQ(errno, EINVAL);
  p = Plain::memalign(48, 10);  // glibc rounds the alignment up
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(aligned(p, 64));
  Plain::free(p);
  p = Plain::valloc(1);
  EXPECT_TRUE(aligned(p, page));
  Plain::free(p);
  p = Plain::pvalloc(1);
  EXPECT_TRUE(aligned(p, page));
  EXPECT_GE(Plain::malloc_usable_size(p), page);
  Plain::free(p);
}

TEST(MallocShim, ReallocSemantics) {
  const std::size_t before = inUse();
  auto* p = static_cast<unsigned char*>(Plain::realloc(nullptr, 100));
  ASSERT_NE(p, nullptr);
  for (int i = 0; i < 100; ++i) p[i] = static_cast<unsigned char>(i);
  // A small shrink stays in place; growth keeps the contents.
  EXPECT_EQ(Plain::realloc(p, 90), p);
  auto* q = static_cast<unsigned char*>(Plain::realloc(p, 100000));
  ASSERT_NE(q, nullptr);
  for (int i = 0; i < 90; ++i) ASSERT_EQ(q[i], i);
  // A large shrink moves, so the memory is not wasted.
  auto* r = static_cast<unsigned char*>(Plain::realloc(q, 50));
  ASSERT_NE(r, nullptr);
  EXPECT_NE(r, q);
  EXPECT_LT(Plain::malloc_usable_size(r), 1000u);
  for (int i = 0; i < 50; ++i) ASSERT_EQ(r[i], i);
  // Failure leaves the block alone.
  {
    Failing failing;
    errno = 0;
    EXPECT_EQ(Plain::realloc(r, 5000), nullptr);
    EXPECT_EQ(errno, ENOMEM);
  }
  errno = 0;
  EXPECT_EQ(Plain::realloc(r, SIZE_MAX - 8), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  for (int i = 0; i < 50; ++i) ASSERT_EQ(r[i], i);
  // realloc(p, 0) frees p and returns nullptr, as glibc does.
  EXPECT_EQ(Plain::realloc(r, 0), nullptr);
  EXPECT_EQ(inUse(), before);
}

TEST(MallocShim, ReallocOfCarvedObjectKeepsContents) {
  auto* p = static_cast<unsigned char*>(Plain::memalign(512, 300));
  ASSERT_NE(p, nullptr);
  for (int i = 0; i < 300; ++i) p[i] = static_cast<unsigned char>(i * 3);
  auto* q = static_cast<unsigned char*>(Plain::realloc(p, 20000));
  ASSERT_NE(q, nullptr);
  for (int i = 0; i < 300; ++i) ASSERT_EQ(q[i], static_cast<unsigned char>(i * 3));
  Plain::free(q);
}

// A big alignment over a heap without memalign carves the object out of a mapping much
// larger than it; shrinking it must unmap the slack in place, not copy the slack (never
// written, so never resident) into a new block of its size.
TEST(MallocShim, ShrinkingAHugelyAlignedMappedObjectKeepsItInPlace) {
  using Kingsley = MallocShim<KingsleyComposition>;
  const std::size_t page = platform::pageSize();
  constexpr std::size_t kWritten = 60000;
  auto* p = static_cast<unsigned char*>(Kingsley::memalign(std::size_t{1} << 28, kWritten));
  ASSERT_NE(p, nullptr);
  for (std::size_t i = 0; i < kWritten; ++i) p[i] = static_cast<unsigned char>(i * 7);
  const std::size_t have = Kingsley::malloc_usable_size(p);
  const std::size_t n = std::max<std::size_t>(have / 4, kWritten);
  auto* q = static_cast<unsigned char*>(Kingsley::realloc(p, n));
  ASSERT_EQ(q, p);
  EXPECT_GE(Kingsley::malloc_usable_size(q), n);
  EXPECT_LT(Kingsley::malloc_usable_size(q), n + page);
  for (std::size_t i = 0; i < kWritten; ++i) ASSERT_EQ(q[i], static_cast<unsigned char>(i * 7));
  const std::uintptr_t from = detail::align_up(reinterpret_cast<std::uintptr_t>(q) + kWritten, page);
  const std::uintptr_t to = (reinterpret_cast<std::uintptr_t>(q) + n) & ~(page - 1);
  std::vector<unsigned char> resident(to > from ? (to - from) / page : 0);
  if (!resident.empty()) {
    ASSERT_EQ(::mincore(reinterpret_cast<void*>(from), to - from, resident.data()), 0);
    EXPECT_EQ(std::count_if(resident.begin(), resident.end(), [](unsigned char r) { return r & 1; }), 0)
        << "the never-written slack was touched";
  }
  // Growing it again keeps the contents, wherever it lands.
  auto* r = static_cast<unsigned char*>(Kingsley::realloc(q, n + 10 * page));
  ASSERT_NE(r, nullptr);
  for (std::size_t i = 0; i < kWritten; ++i) ASSERT_EQ(r[i], static_cast<unsigned char>(i * 7));
  Kingsley::free(r);
}

// Growing a hugely aligned object past its block must move the block's pages, not copy
// its gigabyte of never-written slack (which would make all of it resident).
TEST(MallocShim, GrowingAHugelyAlignedMappedObjectMovesItsPages) {
  using Kingsley = MallocShim<KingsleyComposition>;
  constexpr std::size_t kWritten = 100000;
  auto residentKiB = [] {
    long pages = 0, resident = 0;
    FILE* f = std::fopen("/proc/self/statm", "r");
    if (f == nullptr || std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
    if (f != nullptr) std::fclose(f);
    return resident * (::sysconf(_SC_PAGESIZE) / 1024);
  };
  auto* p = static_cast<unsigned char*>(Kingsley::memalign(std::size_t{1} << 30, kWritten));
  ASSERT_NE(p, nullptr);
  for (std::size_t i = 0; i < kWritten; ++i) p[i] = static_cast<unsigned char>(i * 13);
  const std::size_t have = Kingsley::malloc_usable_size(p);
  // Something just past the block, so that it cannot grow where it is.
  void* fence = ::mmap(p + detail::align_up(have, std::size_t{4096}), 4096, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  const long before = residentKiB();
  auto* q = static_cast<unsigned char*>(Kingsley::realloc(p, have + (std::size_t{8} << 20)));
  ASSERT_NE(q, nullptr);
  EXPECT_LT(residentKiB() - before, 64 * 1024) << "the slack was copied";
  EXPECT_GE(Kingsley::malloc_usable_size(q), have + (std::size_t{8} << 20));
  for (std::size_t i = 0; i < kWritten; ++i) ASSERT_EQ(q[i], static_cast<unsigned char>(i * 13));
  Kingsley::free(q);
  if (fence != MAP_FAILED) ::munmap(fence, 4096);
}

TEST(LeaMallocHeap, ReallocGrowsAndShrinksInPlace) {
  LeaMallocHeap<SbrkHeap<std::size_t{1} << 30>> heap;
  auto* a = static_cast<unsigned char*>(heap.malloc(1000));
  void* b = heap.malloc(3000);
  void* fence = heap.malloc(1000);  // keeps b from being the top block
  heap.free(b);                     // a is now followed by a free block of ~3000 bytes
  for (int i = 0; i < 1000; ++i) a[i] = static_cast<unsigned char>(i);
  EXPECT_EQ(heap.reallocInPlace(a, 3500), a);
  EXPECT_GE(heap.getSize(a), 3500u);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(a[i], static_cast<unsigned char>(i));
  EXPECT_EQ(heap.reallocInPlace(a, 100000), nullptr);  // the fence block is in use: no room
  EXPECT_GE(heap.getSize(a), 3500u);                   // untouched
  EXPECT_EQ(heap.reallocInPlace(a, 200), a);           // shrink: the tail is freed...
  EXPECT_LT(heap.getSize(a), 300u);
  void* c = heap.malloc(2000);                          // ...and reused
  EXPECT_GT(c, static_cast<void*>(a));
  EXPECT_LT(c, fence);
  heap.free(c);
  heap.free(a);
  heap.free(fence);
  void* big = heap.malloc(1 << 20);  // mapped: resized by its mapping
  EXPECT_EQ(heap.reallocInPlace(big, 200000), big);
  EXPECT_LT(heap.getSize(big), 210000u);
  EXPECT_GE(heap.getSize(big), 200000u);
  heap.free(big);
}

// A size beyond any block must not wrap the block size into a small one and "succeed".
TEST(LeaMallocHeap, ReallocInPlaceRefusesAbsurdSizes) {
  LeaMallocHeap<SbrkHeap<std::size_t{1} << 30>> heap;
  auto* a = static_cast<unsigned char*>(heap.malloc(100));
  for (int i = 0; i < 100; ++i) a[i] = static_cast<unsigned char>(i);
  for (std::size_t n : {SIZE_MAX, SIZE_MAX - 8, SIZE_MAX - 20, std::size_t{PTRDIFF_MAX} + 1}) {
    EXPECT_EQ(heap.reallocInPlace(a, n), nullptr) << n;
    EXPECT_GE(heap.getSize(a), 100u);
  }
  for (int i = 0; i < 100; ++i) ASSERT_EQ(a[i], static_cast<unsigned char>(i));
  heap.free(a);
}

TEST(LeaMallocHeap, TrimGivesTopPagesBack) {
  LeaMallocHeap<SbrkHeap<std::size_t{1} << 30>> heap;
  void* keep = heap.malloc(100);
  std::vector<void*> ps;
  for (int i = 0; i < 200; ++i) ps.push_back(heap.malloc(50000));  // below the mmap threshold
  for (void* p : ps) heap.free(p);
  EXPECT_EQ(heap.trim(0), 1);
  EXPECT_EQ(heap.trim(std::size_t{1} << 30), 0);  // a pad bigger than the block: nothing
  void* again = heap.malloc(5'000'000);  // the trimmed block is reused and writable
  ASSERT_NE(again, nullptr);
  std::memset(again, 1, 5'000'000);
  heap.free(again);
  heap.free(keep);
}

TEST(MallocShim, MisalignedForeignPointerIsIgnored) {
  auto* p = static_cast<unsigned char*>(Plain::malloc(64));
  const std::size_t before = inUse();
  Plain::free(p + 1);
  EXPECT_EQ(Plain::malloc_usable_size(p + 8), 0u);
  EXPECT_EQ(inUse(), before);
  Plain::free(p);
}

TEST(MallocShim, AlignedMarkWithBadOffsetIsIgnored) {
  auto* p = static_cast<unsigned char*>(Plain::malloc(64));
  const std::size_t before = inUse();
  // A word below p+32 that looks like a mark with distance 0: not a block of ours.
  detail::header_word(p + 32) = Plain::kAlignedMark;
  Plain::free(p + 32);
  EXPECT_EQ(inUse(), before);
  Plain::free(p);
}

// glibc's memalign: EINVAL only above SIZE_MAX / 2 + 1; 2^63 and its non-power-of-two
// neighbours below are valid alignments no memory satisfies (ENOMEM). A heap with memalign
// never sees one above 1 GiB (its contract): the shim answers ENOMEM itself.
TEST(MallocShim, HugeAlignmentsAnswerAsGlibcDoes) {
  const std::size_t top = SIZE_MAX / 2 + 1;
  for (std::size_t a : {top, top - 1, (std::size_t{1} << 62) + 1}) {
    errno = 0;
    EXPECT_EQ(Plain::memalign(a, 1), nullptr) << a;
    EXPECT_EQ(errno, ENOMEM) << a;
  }
  errno = 0;
  EXPECT_EQ(Plain::memalign(top + 1, 1), nullptr);
  EXPECT_EQ(errno, EINVAL);
  void* p = nullptr;
  EXPECT_EQ(Plain::posix_memalign(&p, top, 1), ENOMEM);
  const int memaligns = NativeHeap::memaligns;
  for (std::size_t a : {std::size_t{1} << 31, std::size_t{1} << 40, top}) {
    errno = 0;
    EXPECT_EQ(Native::memalign(a, 1), nullptr) << a;
    EXPECT_EQ(errno, ENOMEM) << a;
    EXPECT_EQ(Native::posix_memalign(&p, a, 1), ENOMEM) << a;
  }
  EXPECT_EQ(NativeHeap::memaligns, memaligns);
}

TEST(MallocShim, NativeMemalignAndReallocInPlaceAreUsed) {
  const int memaligns = NativeHeap::memaligns, inPlace = NativeHeap::inPlace;
  void* p = Native::memalign(256, 100);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(aligned(p, 256));
  EXPECT_EQ(NativeHeap::memaligns, memaligns + 1);
  EXPECT_GE(Native::malloc_usable_size(p), 100u);
  Native::free(p);
  void* q = Native::malloc(100);
  const std::size_t usable = Native::malloc_usable_size(q);
  EXPECT_EQ(Native::realloc(q, usable), q);  // the heap kept it in place
  EXPECT_EQ(NativeHeap::inPlace, inPlace + 1);
  void* r = Native::realloc(q, 100000);  // the heap said no: moved
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(NativeHeap::inPlace, inPlace + 2);
  Native::free(r);
}

TEST(MallocShim, TrimAndStatisticsComeFromTheHeap) {
  EXPECT_EQ(Native::malloc_trim(123), 1);
  EXPECT_EQ(NativeHeap::lastTrimPad, 123u);
  EXPECT_EQ(Plain::malloc_trim(0), 0);  // no trim: nothing to give back
  const struct mallinfo2 info = Native::mallinfo2();
  EXPECT_EQ(info.arena, 1000u);
  EXPECT_EQ(info.uordblks, 300u);
  EXPECT_EQ(info.fordblks, 700u);
  EXPECT_EQ(info.usmblks, 5000u);
  void* p = Plain::malloc(1000);
  EXPECT_GE(Plain::mallinfo2().uordblks, 1000u);
  Plain::free(p);
}

TEST(MallocShim, ForkHandlersAreRegisteredAndRun) {
  Native::heap();
  const int before = NativeHeap::forkCalls;
  const pid_t pid = ::fork();
  if (pid == 0) _exit(NativeHeap::forkCalls == before + 2 ? 0 : 1);  // prepare + child
  ASSERT_GT(pid, 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(NativeHeap::forkCalls, before + 2);  // prepare + parent
}

TEST(MallocShim, ForkWhileThreadsAllocateDoesNotDeadlock) {
#if defined(STRATA_ASAN)
  // GCC 12's ASan allocator keeps its own locks across fork(): a child of a process whose
  // threads are inside ASan's malloc hangs in it (seen in CI), whatever heap is under test.
  GTEST_SKIP() << "fork() from a threaded process hangs in ASan's own allocator";
#endif
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&] {
      while (!stop) {
        void* p = Plain::malloc(64);
        Plain::free(p);
      }
    });
  for (int i = 0; i < 10; ++i) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::alarm(10);  // a lock left held would hang the child: fail it instead
      void* p = Plain::malloc(100);
      Plain::free(p);
      _exit(0);
    }
    ASSERT_GT(pid, 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child " << i;
  }
  stop = true;
  for (auto& t : threads) t.join();
}

TEST(MallocShim, ConcurrentFirstCallsBuildOneHeap) {
  struct FreshHeap : NativeHeap {};
  using Fresh = MallocShim<FreshHeap>;
  std::atomic<bool> go{false};
  std::vector<FreshHeap*> seen(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      while (!go) {
      }
      seen[t] = &Fresh::heap();
    });
  go = true;
  for (auto& t : threads) t.join();
  for (FreshHeap* h : seen) EXPECT_EQ(h, seen[0]);
}

TEST(MallocShim, OperatorNewThrowsAndLoopsOnTheNewHandler) {
  void* p = Plain::operatorNew(100);
  EXPECT_TRUE(aligned(p, 16));
  Plain::free(p);
  p = Plain::operatorNew(100, std::align_val_t(4096));
  EXPECT_TRUE(aligned(p, 4096));
  Plain::free(p);
  Failing failing;
  EXPECT_THROW(Plain::operatorNew(100), std::bad_alloc);
  EXPECT_THROW(Plain::operatorNew(100, std::align_val_t(64)), std::bad_alloc);
  EXPECT_EQ(Plain::operatorNewNothrow(100), nullptr);
  EXPECT_EQ(Plain::operatorNewNothrow(100, std::align_val_t(64)), nullptr);
  // A handler that makes memory available: the loop retries and succeeds.
  static int calls;
  calls = 0;
  std::set_new_handler([] {
    ++calls;
    SwitchableHeap<MallocHeap>::failing = false;
  });
  p = Plain::operatorNew(100);
  EXPECT_NE(p, nullptr);
  EXPECT_EQ(calls, 1);
  Plain::free(p);
  // A handler that gives up: bad_alloc after one call.
  SwitchableHeap<MallocHeap>::failing = true;
  calls = 0;
  std::set_new_handler([] {
    ++calls;
    std::set_new_handler(nullptr);
  });
  EXPECT_THROW(Plain::operatorNew(100), std::bad_alloc);
  EXPECT_EQ(calls, 1);
  std::set_new_handler(nullptr);
}

// The shim as a Heap for the differential harness: every third request is aligned (32 B ..
// 4 KiB), so carved and plain objects mix, and realloc goes through the shim too.
template <class Shim>
struct ShimAsHeap {
  static constexpr std::size_t Alignment = 16;
  void* malloc(std::size_t n) noexcept {
    ++count;
    if (count % 3 != 0) return Shim::malloc(n);
    return Shim::memalign(std::size_t{32} << (count % 8), n);
  }
  void free(void* p) noexcept { Shim::free(p); }
  void* realloc(void* p, std::size_t n) noexcept { return Shim::realloc(p, n); }
  std::size_t getSize(void* p) noexcept { return Shim::malloc_usable_size(p); }
  unsigned count = 0;
};

template <class H>
void differentialOver() {
  ShimAsHeap<MallocShim<H>> heap;
  test::DiffConfig cfg;
  cfg.ops = 200'000;
  const auto stats = test::runDifferential(heap, cfg);
  EXPECT_GT(stats.reallocs, 0u);
  EXPECT_EQ(MallocShim<H>::heap().stats().bytesInUse, 0u) << "blocks left in use";
}

TEST(MallocShim, DifferentialOverCMalloc) { differentialOver<PlainHeap>(); }
TEST(MallocShim, DifferentialOverKingsleyComposition) { differentialOver<KingsleyComposition>(); }
TEST(MallocShim, DifferentialOverLeaComposition) { differentialOver<LeaComposition>(); }

// Between prepareFork and parentAfterFork another thread's malloc, and then its free, wait
// (SpinLock: the thread spins and yields, seen using CPU time without returning, however
// slowly it is scheduled); after parentAfterFork each returns.
TEST(ForkSafeHeap, PrepareForkHoldsOtherThreadsOut) {
  ForkSafeHeap<SizeHeap<MallocHeap>> heap;
  test::expectMallocAndFreeHeldOut(
      heap, 10, [&] { heap.prepareFork(); }, [&] { heap.parentAfterFork(); },
      "after prepareFork");
  EXPECT_EQ(heap.stats().bytesInUse, 0u);
}
