// StrataSecureHeap, the heap of libstrata-secure.so: the whole stack through the
// differential harness (with and without its optional checks), its options read from the
// environment (bad values named and ignored), and each layer's report reaching through it.
#include "strata/general/strata_secure_heap.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/differential.hpp"

using namespace strata;

static_assert(ExactSizedHeap<StrataSecureHeap> && StrataSecureHeap::Alignment == 16);
static_assert(ResizesInPlace<StrataSecureHeap> && ZeroingHeap<StrataSecureHeap>);
static_assert(OwningHeap<StrataSecureHeap>, "foreign pointers are found by a map lookup");

namespace {
// The per-thread heap (its medium tier on top) inside a StrataHeapOf.
template <class H>
struct LocalOf;
template <class L, class S, std::size_t MinSpan, unsigned ArenaShift>
struct LocalOf<HugeObjectHeap<LargeSpanHeap<ThreadBoundHeap<L, S>, MinSpan, ArenaShift>>> {
  using type = L;
};
}  // namespace

// The header and canary make every block 24 bytes larger than its request; the secure heap's
// medium tier starts that much higher, so no request StrataHeap serves from its pages goes to
// the tier's coalescing regions here, and at most one class's worth of requests near the
// border goes the other way.
TEST(StrataSecureHeap, RequestsTakeTheTierTheyTakeUnderStrataHeap) {
  using Classes = FineSizeClasses<kStrataClassShift>;
  using Plain = LocalOf<StrataHeapOf<>>::type;
  using Secure = LocalOf<EncodedLinkStrataHeapBase>::type;
  std::size_t onPagesHereOnly = 0;
  for (std::size_t n = 1; n + kStrataSecureOverhead <= kStrataSpanMin; ++n) {
    const bool plain = Plain::inTier(Classes::size2class(n));
    const bool secure = Secure::inTier(Classes::size2class(n + kStrataSecureOverhead));
    ASSERT_FALSE(secure && !plain) << n << " bytes go to the tier only under the hardening";
    if (plain && !secure) ++onPagesHereOnly;
  }
  EXPECT_LE(onPagesHereOnly, 16u);
  EXPECT_TRUE(Secure::inTier(Classes::size2class(kStrataSpanMin))) << "the tier still ends at the spans";
}

TEST(StrataSecureHeap, Differential) {
  test::expectEverythingReturned<StrataSecureHeap>({.seed = 61, .ops = 400'000});
}

TEST(StrataSecureHeap, DifferentialWithEveryCheckOffOrWide) {
  for (const StrataSecureOptions& o :
       {StrataSecureOptions{.canary = {.enabled = false}, .quarantine = {.bytes = 0}},
        StrataSecureOptions{.canary = {}, .quarantine = {}},
        StrataSecureOptions{.canary = {}, .quarantine = {.bytes = 64 << 20, .maxObject = 8 << 20}}}) {
    StrataSecureHeap h(o);
    test::runDifferential(h, {.seed = 62, .ops = 200'000, .sizes = test::SizeMix::Mixed});
  }
}

namespace {
// Sets the variables for the life of the object.
struct Env {
  explicit Env(std::vector<std::pair<std::string, std::string>> vars) : vars_(std::move(vars)) {
    for (const auto& [k, v] : vars_) ::setenv(k.c_str(), v.c_str(), 1);
  }
  ~Env() {
    for (const auto& [k, v] : vars_) ::unsetenv(k.c_str());
  }
  std::vector<std::pair<std::string, std::string>> vars_;
};
}  // namespace

TEST(StrataSecureHeap, OptionsFromTheEnvironment) {
  {
    const StrataSecureOptions d = secureOptionsFromEnvironment();
    EXPECT_TRUE(d.canary.enabled);
    EXPECT_EQ(d.quarantine.bytes, 0u) << "the quarantine is off unless asked for";
    EXPECT_EQ(d.quarantine.maxObject, QuarantineOptions{}.maxObject);
  }
  Env env({{"STRATA_CANARIES", "0"}, {"STRATA_QUARANTINE", "8M"}, {"STRATA_QUARANTINE_MAX", "64k"}});
  const StrataSecureOptions o = secureOptionsFromEnvironment();
  EXPECT_FALSE(o.canary.enabled);
  EXPECT_EQ(o.quarantine.bytes, std::size_t{8} << 20);
  EXPECT_EQ(o.quarantine.maxObject, std::size_t{64} << 10);
}

TEST(StrataSecureHeap, BadOptionsAreNamedAndKeepTheDefault) {
  Env env({{"STRATA_CANARIES", "yes"}, {"STRATA_QUARANTINE", "lots"}});
  testing::internal::CaptureStderr();
  const StrataSecureOptions o = secureOptionsFromEnvironment();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(o.canary.enabled);
  EXPECT_EQ(o.quarantine.bytes, StrataSecureOptions{}.quarantine.bytes);
  EXPECT_NE(err.find("strata: ignoring STRATA_CANARIES=yes (0 or 1); using the default"),
            std::string::npos) << err;
  EXPECT_NE(err.find("strata: ignoring STRATA_QUARANTINE=lots"), std::string::npos) << err;
}

using StrataSecureHeapDeathTest = ::testing::Test;

// One misuse per layer, through the whole stack (the quarantine asked for).
TEST_F(StrataSecureHeapDeathTest, EveryLayerReportsThroughTheStack) {
  static StrataSecureHeap h(StrataSecureOptions{.canary = {}, .quarantine = {}});
  auto* a = static_cast<char*>(h.malloc(100));
  auto* b = static_cast<char*>(h.malloc(100));
  h.free(b);
  EXPECT_DEATH(h.free(b), "strata: double free at 0x");
  EXPECT_DEATH(
      {
        a[100] = 'A';
        h.free(a);
      },
      "strata: overflow past the end of an object at 0x");
  EXPECT_DEATH(
      {
        b[20] = 'A';
        h.checkAll();
      },
      "strata: write after free at 0x");
}

// A pointer from elsewhere is named as foreign: in the middle of a page (the bytes below it
// are read, then looked up), and at a page's first byte with nothing mapped below it (looked
// up before anything is read, so no fault).
TEST_F(StrataSecureHeapDeathTest, ForeignPointersAreNamedWithoutAFault) {
  static StrataSecureHeap h;
  alignas(16) static char global[64];
  EXPECT_DEATH(h.free(global + 32), "strata: free of a pointer not from this heap at 0x");
  const std::size_t page = 4096;
  void* m = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(m, MAP_FAILED);
  ASSERT_EQ(mprotect(m, page, PROT_NONE), 0);
  char* second = static_cast<char*>(m) + page;
  EXPECT_DEATH(h.free(second), "strata: free of a pointer not from this heap at 0x");
  munmap(m, 2 * page);
}
