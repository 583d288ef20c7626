#include "strata/utility/debug_heap.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "strata/general/kingsley_heap.hpp"
#include "strata/general/lea_heap.hpp"
#include "strata/general/strata_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/utility/ansi_wrapper.hpp"
#include "common/differential.hpp"

using namespace strata;

using Debug = DebugHeap<KingsleyHeap<SbrkHeap<>>>;
static_assert(SizedHeap<Debug> && Debug::Alignment == 16);
static_assert(ClearableHeap<Debug>);
static_assert(!ClearableHeap<DebugHeap<MallocHeap>>);

// The parent's own ways to allocate and resize would bypass the canaries and the table, so
// DebugHeap does not pass them on (adapters above then use malloc, copy and free).
template <class H>
concept ExtraAllocation = requires(H& h, void* p, std::size_t n) { h.memalign(n, n); } ||
    requires(H& h, std::size_t n) { h.mallocZeroed(n); } ||
    requires(H& h, void* p, std::size_t n) { h.reallocInPlace(p, n); } ||
    requires(H& h, void* p, std::size_t n) { h.reallocMoving(p, n); } ||
    requires(H& h, std::size_t n) { h.mallocFromBins(n); };
static_assert(ExtraAllocation<StrataHeap> && !ExtraAllocation<DebugHeap<StrataHeap>>);
static_assert(BinnedHeap<LeaHeap<>> && !BinnedHeap<DebugHeap<LeaHeap<>>>);

namespace {

// Collects every report a heap makes.
struct Reports {
  std::vector<DebugReport> all;
  std::vector<std::string> messages;

  static void record(const DebugReport& r, void* self) {
    auto* reports = static_cast<Reports*>(self);
    reports->all.push_back(r);
    reports->all.back().message = nullptr;  // the text lives only during the call
    reports->messages.emplace_back(r.message);
  }
  template <class H>
  void listenTo(H& heap) {
    heap.setReportHandler(&Reports::record, this);
  }
};

std::string addr(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

bool allBytes(const void* p, std::size_t n, unsigned char value) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i)
    if (b[i] != value) return false;
  return true;
}

// The heap keeps working: objects come and go with no new reports and no damage found.
template <class H>
void expectStillWorks(H& h, const Reports& reports) {
  const std::size_t before = reports.all.size();
  std::vector<char*> objs;
  for (std::size_t n = 1; n < 3000; n += 97) {
    auto* p = static_cast<char*>(h.malloc(n));
    ASSERT_NE(p, nullptr);
    std::memset(p, 0x11, n);
    objs.push_back(p);
  }
  for (char* p : objs) h.free(p);
  EXPECT_EQ(h.check(), 0u);
  EXPECT_EQ(reports.all.size(), before) << reports.messages.back();
}

}  // namespace

TEST(DebugHeap, FillsNewObjectsAndKnowsTheRequestedSize) {
  Debug h;
  void* p = h.malloc(40);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(detail::is_aligned(p, 16));
  EXPECT_TRUE(allBytes(p, 40, 0xA5));
  EXPECT_EQ(h.getSize(p), 40u);
  EXPECT_EQ(h.liveObjects(), 1u);
  h.free(p);
  EXPECT_EQ(h.liveObjects(), 0u);
}

TEST(DebugHeap, FreedObjectsAreFilledAndQuarantined) {
  Debug h;
  auto* p = static_cast<unsigned char*>(h.malloc(64));
  std::memset(p, 0x42, 64);
  h.free(p);
  EXPECT_EQ(h.quarantinedObjects(), 1u);
  // Still in quarantine (the memory is the debug heap's), so this read is safe.
  EXPECT_TRUE(allBytes(p, 64, 0xDD));
  // The same class is not handed the quarantined object back.
  void* q = h.malloc(64);
  EXPECT_NE(q, p);
  h.free(q);
}

TEST(DebugHeap, QuarantineReleasesOldestToTheParent) {
  DebugHeap<KingsleyHeap<SbrkHeap<>>, 4> h;
  void* objs[5];
  for (auto& p : objs) p = h.malloc(32);
  for (auto& p : objs) h.free(p);
  EXPECT_EQ(h.quarantinedObjects(), 4u);
  // The first freed object left quarantine and is now in Kingsley's 64-byte bin.
  EXPECT_EQ(h.malloc(32), objs[0]);
}

TEST(DebugHeap, DoubleFreeIsReportedWithAddressAndSizesAndIgnored) {
  Debug h;
  Reports reports;
  reports.listenTo(h);
  void* p = h.malloc(40);
  h.free(p);
  h.free(p);
  ASSERT_EQ(reports.all.size(), 1u);
  EXPECT_EQ(reports.all[0].error, DebugError::DoubleFree);
  EXPECT_EQ(reports.all[0].pointer, p);
  EXPECT_EQ(reports.all[0].size, 48u);
  EXPECT_EQ(reports.all[0].requested, 40u);
  EXPECT_EQ(reports.messages[0],
            "strata DebugHeap: double free of " + addr(p) + " (48 bytes, allocated as 40)");
  EXPECT_EQ(h.errorsReported(), 1u);
  EXPECT_EQ(h.quarantinedObjects(), 1u);  // not queued twice
  expectStillWorks(h, reports);
}

TEST(DebugHeap, FreeOfForeignPointerIsReportedAndTheMemoryLeftAlone) {
  Debug h;
  Reports reports;
  reports.listenTo(h);
  MallocHeap other;
  auto* foreign = static_cast<unsigned char*>(other.malloc(64));
  std::memset(foreign, 0x5A, 64);
  h.free(foreign);
  ASSERT_EQ(reports.all.size(), 1u);
  EXPECT_EQ(reports.all[0].error, DebugError::InvalidFree);
  EXPECT_EQ(reports.all[0].pointer, foreign);
  EXPECT_EQ(reports.all[0].object, nullptr);
  EXPECT_NE(reports.messages[0].find("invalid free of " + addr(foreign)), std::string::npos)
      << reports.messages[0];
  EXPECT_TRUE(allBytes(foreign, 64, 0x5A));  // never written
  other.free(foreign);

  alignas(16) unsigned char stack[64] = {};
  h.free(stack + 16);
  ASSERT_EQ(reports.all.size(), 2u);
  EXPECT_EQ(reports.all[1].error, DebugError::InvalidFree);
  EXPECT_NE(reports.messages[1].find(addr(stack + 16)), std::string::npos);
  expectStillWorks(h, reports);
}

TEST(DebugHeap, InteriorFreeNamesTheObjectAndOffset) {
  Debug h;
  Reports reports;
  reports.listenTo(h);
  auto* p = static_cast<char*>(h.malloc(100));
  h.free(p + 8);
  ASSERT_EQ(reports.all.size(), 1u);
  EXPECT_EQ(reports.all[0].error, DebugError::InteriorFree);
  EXPECT_EQ(reports.all[0].pointer, p + 8);
  EXPECT_EQ(reports.all[0].object, p);
  EXPECT_EQ(reports.all[0].offset, 8);
  EXPECT_EQ(reports.messages[0], "strata DebugHeap: invalid free of " + addr(p + 8) +
                                     ": interior pointer, 8 bytes into " + addr(p) +
                                     " (112 bytes, allocated as 100)");
  EXPECT_EQ(h.liveObjects(), 1u);  // the object is still live and frees normally
  h.free(p);
  EXPECT_EQ(reports.all.size(), 1u);
  expectStillWorks(h, reports);
}

TEST(DebugHeap, OneByteOverrunIsCaughtByCheckAndOnFree) {
  Debug h;
  Reports reports;
  reports.listenTo(h);
  for (std::size_t n : {40u, 48u, 1u, 0u}) {
    reports.all.clear();
    reports.messages.clear();
    auto* p = static_cast<char*>(h.malloc(n));
    std::memset(p, 0, n + 1);  // one byte too many
    EXPECT_EQ(h.check(), 1u) << n;
    h.free(p);
    ASSERT_EQ(reports.all.size(), 2u) << n;
    for (const DebugReport& r : reports.all) {
      EXPECT_EQ(r.error, DebugError::Overrun);
      EXPECT_EQ(r.object, p);
      EXPECT_EQ(r.offset, static_cast<std::ptrdiff_t>(n));
    }
    char expected[200];
    std::snprintf(expected, sizeof expected,
                  "strata DebugHeap: buffer overrun of %p (%zu bytes, allocated as %zu): "
                  "canary at offset %zu overwritten",
                  static_cast<void*>(p), (n + 15) / 16 * 16, n, n);
    EXPECT_EQ(reports.messages[1], expected);
    EXPECT_EQ(h.liveObjects(), 0u);  // the damaged object is forgotten, not recycled
  }
  reports.all.clear();
  expectStillWorks(h, reports);
}

TEST(DebugHeap, UnderrunIsCaught) {
  Debug h;
  Reports reports;
  reports.listenTo(h);
  auto* p = static_cast<char*>(h.malloc(24));
  p[-1] = 7;
  h.free(p);
  ASSERT_EQ(reports.all.size(), 1u);
  EXPECT_EQ(reports.all[0].error, DebugError::Underrun);
  EXPECT_EQ(reports.all[0].offset, -1);
  EXPECT_NE(reports.messages[0].find("buffer underrun of " + addr(p) + " (32 bytes, allocated as 24)"),
            std::string::npos)
      << reports.messages[0];

  // Clobbering the size word (farther below) is caught too.
  auto* q = static_cast<char*>(h.malloc(24));
  std::memset(q - Debug::HeaderSize, 0, 8);
  EXPECT_EQ(h.check(), 1u);
  EXPECT_EQ(reports.all.back().error, DebugError::Underrun);
  EXPECT_EQ(reports.all.back().offset, -static_cast<std::ptrdiff_t>(Debug::HeaderSize));
  h.free(q);  // reported again, and retired
  EXPECT_EQ(reports.all.size(), 3u);
  EXPECT_EQ(h.liveObjects(), 0u);
  expectStillWorks(h, reports);
}

TEST(DebugHeap, WriteAfterFreeIsCaughtInQuarantine) {
  DebugHeap<KingsleyHeap<SbrkHeap<>>, 2> h;
  Reports reports;
  reports.listenTo(h);
  auto* p = static_cast<char*>(h.malloc(32));
  h.free(p);
  p[5] = 1;  // the quarantined memory is still the debug heap's
  EXPECT_EQ(h.check(), 1u);
  ASSERT_EQ(reports.all.size(), 1u);
  EXPECT_EQ(reports.all[0].error, DebugError::WriteAfterFree);
  EXPECT_EQ(reports.all[0].offset, 5);
  // Pushing it out of quarantine reports it again and keeps it out of circulation.
  h.free(h.malloc(32));
  h.free(h.malloc(32));
  ASSERT_EQ(reports.all.size(), 2u);
  EXPECT_EQ(reports.all[1].error, DebugError::WriteAfterFree);
  EXPECT_EQ(reports.all[1].object, p);
  for (int i = 0; i < 100; ++i) {
    void* q = h.malloc(32);
    EXPECT_NE(q, p);
    h.free(q);
  }
}

TEST(DebugHeap, CheckWalksEveryLiveObject) {
  Debug h;
  Reports reports;
  reports.listenTo(h);
  std::vector<char*> objs;
  for (std::size_t i = 0; i < 2000; ++i) objs.push_back(static_cast<char*>(h.malloc(i % 300 + 1)));
  EXPECT_EQ(h.check(), 0u);
  objs[17][h.getSize(objs[17])] = 0;
  objs[1500][h.getSize(objs[1500]) + 3] = 0;
  objs[999][-2] = 0;
  EXPECT_EQ(h.check(), 3u);
  std::set<void*> damaged;
  for (const DebugReport& r : reports.all) damaged.insert(r.object);
  EXPECT_EQ(damaged, (std::set<void*>{objs[17], objs[1500], objs[999]}));
  for (char* p : objs) h.free(p);
  EXPECT_EQ(reports.all.size(), 6u);  // three from check, three on free
}

TEST(DebugHeap, DefaultHandlerWritesOneLineToStderr) {
  Debug h;
  void* p = h.malloc(40);
  h.free(p);
  testing::internal::CaptureStderr();
  h.free(p);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "strata DebugHeap: double free of " + addr(p) + " (48 bytes, allocated as 40)\n");
}

TEST(DebugHeap, WithoutQuarantineADoubleFreeReadsAsInvalid) {
  DebugHeap<KingsleyHeap<SbrkHeap<>>, 0> h;
  Reports reports;
  reports.listenTo(h);
  void* p = h.malloc(40);
  h.free(p);
  EXPECT_EQ(h.quarantinedObjects(), 0u);
  h.free(p);
  ASSERT_EQ(reports.all.size(), 1u);
  EXPECT_EQ(reports.all[0].error, DebugError::InvalidFree);
  EXPECT_EQ(h.malloc(40), p);  // went straight back to Kingsley's bin
}

TEST(DebugHeap, HugeRequestsAreNull) {
  Debug h;
  for (std::size_t n : {SIZE_MAX, SIZE_MAX - 40, SIZE_MAX / 2}) {
    errno = 0;
    EXPECT_EQ(h.malloc(n), nullptr) << n;
    EXPECT_EQ(errno, ENOMEM);
  }
  EXPECT_EQ(h.errorsReported(), 0u);
}

TEST(DebugHeap, ClearForgetsEverything) {
  Debug h;
  for (int i = 0; i < 100; ++i) h.malloc(100);
  h.free(h.malloc(10));
  h.clear();
  EXPECT_EQ(h.liveObjects(), 0u);
  EXPECT_EQ(h.quarantinedObjects(), 0u);
  EXPECT_EQ(h.bytesHeld(), 0u);
  Reports reports;
  reports.listenTo(h);
  expectStillWorks(h, reports);
}

namespace {

// Runs the harness over a fresh H, expects no reports and every byte back afterwards.
template <class H>
void differentialWithoutReports(const test::DiffConfig& cfg) {
  const std::size_t before = processAccount().held();
  {
    H h;
    Reports reports;
    reports.listenTo(h);
    const test::DiffStats stats = test::runDifferential(h, cfg);
    EXPECT_GT(stats.frees, cfg.ops / 4);
    EXPECT_EQ(h.check(), 0u);
    EXPECT_TRUE(reports.all.empty()) << reports.messages.front();
    EXPECT_EQ(h.liveObjects(), 0u);
  }
  EXPECT_EQ(processAccount().held(), before);
}

}  // namespace

TEST(DebugHeap, DifferentialOverKingsley) {
  differentialWithoutReports<ANSIWrapper<DebugHeap<KingsleyHeap<SbrkHeap<>>>>>(
      {.seed = 11, .ops = 400'000, .zeroSizes = true});
  test::expectEverythingReturned<ANSIWrapper<DebugHeap<KingsleyHeap<SbrkHeap<>>>>>(
      {.seed = 12, .ops = 200'000, .sizes = test::SizeMix::Small});
}

TEST(DebugHeap, DifferentialOverMallocGivesQuarantineAndTableBack) {
  differentialWithoutReports<ANSIWrapper<DebugHeap<MallocHeap>>>(
      {.seed = 13, .ops = 300'000, .maxLive = 10000, .sizes = test::SizeMix::Small});
}

// Over StrataHeap, which has memalign, mallocZeroed and realloc in place of its own: none of
// them may reach past DebugHeap, so nothing is reported and every object is checked.
TEST(DebugHeap, DifferentialOverStrataHeap) {
  differentialWithoutReports<ANSIWrapper<DebugHeap<StrataHeap>>>(
      {.seed = 14, .ops = 200'000, .zeroSizes = true});
}
