#include "strata/utility/profile_heap.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <string>

#include "strata/general/kingsley_heap.hpp"
#include "strata/representation/size_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/utility/ansi_wrapper.hpp"
#include "common/differential.hpp"

using namespace strata;

using Profiled = ProfileHeap<MallocHeap>;
static_assert(SizedHeap<Profiled> && Profiled::Alignment == 16);
static_assert(ProfileStats::bucketOf(0) == 0 && ProfileStats::bucketOf(1) == 0);
static_assert(ProfileStats::bucketOf(2) == 1 && ProfileStats::bucketOf(3) == 2);
static_assert(ProfileStats::bucketOf(16) == 4 && ProfileStats::bucketOf(17) == 5);
static_assert(ProfileStats::bucketOf(SIZE_MAX) == 64);

namespace {

// A heap that hides its parent's accounting, so ProfileHeap must use the process account.
template <Heap S>
class Unaccounted : private S {
 public:
  static constexpr std::size_t Alignment = S::Alignment;
  using S::free;
  using S::malloc;
};
static_assert(Heap<Unaccounted<MallocHeap>> && !AccountedHeap<Unaccounted<MallocHeap>>);

}  // namespace

TEST(ProfileHeap, ExactCountsOnAScriptedSequence) {
  Profiled h;
  void* a = h.malloc(10);
  void* b = h.malloc(100);
  void* c = h.malloc(1000);
  EXPECT_EQ(h.getSize(a), 10u);
  EXPECT_EQ(h.getSize(c), 1000u);
  h.free(b);
  void* d = h.malloc(17);
  errno = 0;
  EXPECT_EQ(h.malloc(SIZE_MAX), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  h.free(nullptr);

  ProfileStats s = h.stats();
  EXPECT_EQ(s.mallocs, 4u);
  EXPECT_EQ(s.failedMallocs, 1u);
  EXPECT_EQ(s.frees, 1u);
  EXPECT_EQ(s.liveObjects, 3u);
  EXPECT_EQ(s.peakLiveObjects, 3u);
  EXPECT_EQ(s.liveBytes, 1027u);
  EXPECT_EQ(s.peakLiveBytes, 1110u);
  EXPECT_EQ(s.requestsBySize[4], 1u);   // 10: (8, 16]
  EXPECT_EQ(s.requestsBySize[5], 1u);   // 17: (16, 32]
  EXPECT_EQ(s.requestsBySize[7], 1u);   // 100: (64, 128]
  EXPECT_EQ(s.requestsBySize[10], 1u);  // 1000: (512, 1024]
  EXPECT_EQ(s.requestsBySize[64], 1u);  // SIZE_MAX
  std::size_t total = 0;
  for (std::size_t k : s.requestsBySize) total += k;
  EXPECT_EQ(total, 5u);

  h.free(a);
  h.free(c);
  h.free(d);
  s = h.stats();
  EXPECT_EQ(s.frees, 4u);
  EXPECT_EQ(s.liveObjects, 0u);
  EXPECT_EQ(s.liveBytes, 0u);
  EXPECT_EQ(s.peakLiveBytes, 1110u);
  EXPECT_EQ(s.peakBytesHeld, h.peakBytesHeld());
}

TEST(ProfileHeap, FragmentationOfKingsleyCountsRoundingAndHeaders) {
  ProfileHeap<KingsleyHeap<SbrkHeap<>>> h;
  void* objs[100];
  for (auto& p : objs) p = h.malloc(65);
  for (auto& p : objs) h.free(p);
  const ProfileStats s = h.stats();
  // 65 + 16 (profile header) rounds to Kingsley's 128 class, plus SizeHeap's 16: 144 each.
  EXPECT_EQ(s.peakLiveBytes, 6500u);
  EXPECT_EQ(s.peakBytesHeld, 14400u);
  EXPECT_DOUBLE_EQ(s.fragmentation, 14400.0 / 6500.0 - 1.0);
  EXPECT_GT(s.fragmentation, 0.0);
}

TEST(ProfileHeap, UsableSizesLeaveTheCompositionUntouched) {
  ProfileHeap<KingsleyHeap<SbrkHeap<>>, ProfileSize::Usable> h;
  static_assert(decltype(h)::HeaderSize == 0);
  void* objs[100];
  for (auto& p : objs) p = h.malloc(65);
  EXPECT_EQ(h.getSize(objs[0]), 128u);
  for (auto& p : objs) h.free(p);
  const ProfileStats s = h.stats();
  EXPECT_EQ(s.peakLiveBytes, 12800u);           // usable bytes
  EXPECT_EQ(s.peakBytesHeld, 100u * (128 + 16));  // no profile header
  EXPECT_DOUBLE_EQ(s.fragmentation, 0.125);
  EXPECT_EQ(s.liveBytes, 0u);
}

TEST(ProfileHeap, WithoutAccountedParentUsesTheProcessAccount) {
  const std::size_t before = processAccount().held();
  ProfileHeap<Unaccounted<MallocHeap>> h;
  void* objs[100];
  for (auto& p : objs) p = h.malloc(100);
  const std::size_t grown = processAccount().held() - before;
  for (auto& p : objs) h.free(p);
  const ProfileStats s = h.stats();
  EXPECT_EQ(s.peakLiveBytes, 10000u);
  EXPECT_EQ(s.peakBytesHeld, grown);
  EXPECT_GT(s.fragmentation, 0.0);  // at least the 16-byte headers
  EXPECT_DOUBLE_EQ(s.fragmentation, double(grown) / 10000.0 - 1.0);
}

TEST(ProfileHeap, ClearEndsEveryLiveObject) {
  ProfileHeap<SbrkHeap<>> h;
  for (int i = 0; i < 10; ++i) h.malloc(50);
  h.clear();
  ProfileStats s = h.stats();
  EXPECT_EQ(s.liveObjects, 0u);
  EXPECT_EQ(s.liveBytes, 0u);
  EXPECT_EQ(s.peakLiveObjects, 10u);
  EXPECT_EQ(s.mallocs, 10u);
}

TEST(ProfileHeap, ReportPrintsTheNumbers) {
  Profiled h;
  void* a = h.malloc(10);
  void* b = h.malloc(100);
  h.free(a);
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  h.report(f);
  std::rewind(f);
  std::string text;
  char buf[256];
  while (std::fgets(buf, sizeof buf, f)) text += buf;
  std::fclose(f);
  EXPECT_NE(text.find("mallocs 2 (failed 0), frees 1"), std::string::npos) << text;
  EXPECT_NE(text.find("live objects 1 (peak 2), live bytes 100 (peak 110)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("<= 16 B: 1"), std::string::npos) << text;
  EXPECT_NE(text.find("<= 128 B: 1"), std::string::npos) << text;
  EXPECT_NE(text.find("fragmentation"), std::string::npos) << text;
  h.free(b);
}

TEST(ProfileHeap, DifferentialCountsMatchTheHarness) {
  const std::size_t before = processAccount().held();
  {
    ANSIWrapper<ProfileHeap<KingsleyHeap<SbrkHeap<>>>> h;
    const test::DiffStats d =
        test::runDifferential(h, {.seed = 21, .ops = 300'000, .useRealloc = false});
    const ProfileStats s = h.stats();
    EXPECT_EQ(s.mallocs, d.mallocs);
    EXPECT_EQ(s.frees, d.frees);
    EXPECT_EQ(s.peakLiveObjects, d.peakLiveObjects);
    EXPECT_EQ(s.peakLiveBytes, d.peakLiveBytes);
    EXPECT_EQ(s.liveBytes, 0u);
    EXPECT_GT(s.fragmentation, 0.0);
  }
  EXPECT_EQ(processAccount().held(), before);
  test::expectEverythingReturned<ANSIWrapper<ProfileHeap<SizeHeap<MallocHeap>>>>(
      {.seed = 22, .ops = 200'000, .zeroSizes = true});
}
