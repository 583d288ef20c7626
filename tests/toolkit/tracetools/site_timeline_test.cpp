// The figures by site that the sites document adds (computeStats with a SiteStats): bytes
// never freed, temporary allocations, the bytes each site held live at the timeline's moments
// and the program's live-bytes curve, on traces built by hand whose every value is worked out
// below; and the curve, the clock and the moments on long runs (site_timeline.hpp).
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tracetools/site_timeline.hpp"
#include "test_util.hpp"
#include "timeline_traces.hpp"
#include "tracetools/trace_stats.hpp"

namespace {

using namespace tttest;
namespace tt = strata::tracetools;
using U = std::vector<std::uint64_t>;

U row(const tt::SiteStats& s, std::uint64_t site) {
  const auto r = s.timeline.site(site);
  return U(r.begin(), r.end());
}

// The twelve events of smallTrace (timeline_traces.hpp): every event is a moment.
TEST(SiteTimeline, NeverFreedTemporaryAndEveryMomentOfAShortTrace) {
  TempDir dir;
  tt::SiteStats s;
  const tt::TraceStats st = tt::computeStats(smallTrace(dir), &s);
  ASSERT_TRUE(s.present);
  ASSERT_EQ(s.bySite.size(), 5u);
  EXPECT_EQ(st.peakLiveBytes, 600u);
  EXPECT_EQ(s.peakEvent, 8u);
  EXPECT_EQ(s.peakNs, 80u);
  const tt::SiteFigures &a = s.bySite[1], &b = s.bySite[2], &c = s.bySite[3];
  EXPECT_EQ(a.allocations, 2u);
  EXPECT_EQ(a.bytes, 140u);
  EXPECT_EQ(a.neverFreedObjects, 1u);
  EXPECT_EQ(a.neverFreedBytes, 40u);
  EXPECT_EQ(a.temporaryAllocations, 0u);
  EXPECT_EQ(b.neverFreedBytes, 8u);
  // o1 is freed before the next allocation; o2 is not (o3 came in between).
  EXPECT_EQ(b.temporaryAllocations, 1u);
  EXPECT_EQ(b.temporaryBytes, 10u);
  // o3's free follows another free but no allocation: still temporary.
  EXPECT_EQ(c.temporaryAllocations, 1u);
  EXPECT_EQ(c.temporaryBytes, 30u);
  EXPECT_EQ(c.neverFreedObjects, 0u);
  EXPECT_EQ(c.peakLiveBytes, 500u);
  EXPECT_EQ(a.peakLiveBytes, 100u);
  EXPECT_EQ(s.timeline.events, (U{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
  EXPECT_EQ(s.timeline.ns, (U{10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120}));
  EXPECT_EQ(row(s, 1), (U{100, 100, 100, 100, 100, 100, 100, 100, 0, 40, 40, 40}));
  EXPECT_EQ(row(s, 2), (U{0, 10, 0, 20, 20, 0, 0, 0, 0, 0, 0, 8}));
  EXPECT_EQ(row(s, 3), (U{0, 0, 0, 0, 30, 30, 0, 500, 500, 500, 0, 0}));
  EXPECT_EQ(row(s, 0), U(12, 0));
  EXPECT_EQ(row(s, 4), U(12, 0));  // a site that allocated nothing
  EXPECT_EQ(a.maxLiveBytes, 100u);
  EXPECT_EQ(b.maxLiveBytes, 20u);
  EXPECT_EQ(c.maxLiveBytes, 500u);
  // The curve: every event, the peak among them.
  EXPECT_EQ(s.curve.liveBytes, (U{100, 110, 100, 120, 150, 130, 100, 600, 500, 540, 40, 48}));
  EXPECT_EQ(s.curve.events, s.timeline.events);
}

// 1,000 events: 200 moments every 5 events, and the peak (event 503) inserted among them.
TEST(SiteTimeline, EvenlySpacedMomentsWithThePeakInserted) {
  TempDir dir;
  tt::SiteStats s;
  const tt::TraceStats st = tt::computeStats(spikeTrace(dir), &s);
  EXPECT_EQ(st.events, 1000u);
  EXPECT_EQ(st.peakLiveBytes, 6008u);
  EXPECT_EQ(s.peakEvent, 503u);
  ASSERT_EQ(s.timeline.events.size(), 201u);
  U expected;
  for (std::uint64_t e = 5; e <= 1000; e += 5) {
    if (e == 505) expected.push_back(503);
    expected.push_back(e);
  }
  EXPECT_EQ(s.timeline.events, expected);
  for (std::size_t j = 0; j < expected.size(); ++j) {
    const std::uint64_t e = expected[j];
    EXPECT_EQ(s.timeline.ns[j], 10 * e);
    EXPECT_EQ(s.timeline.site(1)[j], 1000u) << e;
    EXPECT_EQ(s.timeline.site(2)[j], e % 2 == 0 || e == 503 ? 8u : 0u) << e;
    EXPECT_EQ(s.timeline.site(3)[j], e == 503 ? 5000u : 0u) << e;
  }
  EXPECT_EQ(s.bySite[2].temporaryAllocations, 497u);  // 499 made, 502's and 1000's not temporary
  EXPECT_EQ(s.bySite[2].temporaryBytes, 497u * 8);
  EXPECT_EQ(s.bySite[3].temporaryAllocations, 1u);
  EXPECT_EQ(s.bySite[2].neverFreedBytes, 8u);
  EXPECT_EQ(s.bySite[1].neverFreedBytes, 1000u);
  EXPECT_EQ(s.bySite[3].maxLiveBytes, 5000u);
  // The curve's largest point is the peak, at its event.
  ASSERT_FALSE(s.curve.liveBytes.empty());
  std::size_t top = 0;
  for (std::size_t i = 0; i < s.curve.liveBytes.size(); ++i)
    if (s.curve.liveBytes[i] > s.curve.liveBytes[top]) top = i;
  EXPECT_EQ(s.curve.liveBytes[top], st.peakLiveBytes);
  EXPECT_EQ(s.curve.events[top], s.peakEvent);
}

// A run far longer than the curve's bound: at most 2 * kMaxBuckets + 1 points in event order,
// the one spike and the one dip kept exactly, the last event last.
TEST(LiveCurve, DownsamplesAndKeepsTheExtremes) {
  tt::LiveCurveBuilder b;
  constexpr std::uint64_t kEvents = 3'000'001;
  for (std::uint64_t e = 1; e <= kEvents; ++e) {
    std::uint64_t live = 1000 + (e * 7919) % 1000;  // between 1000 and 1999
    if (e == 1'234'567) live = 50'000;
    if (e == 2'345'678) live = 3;
    b.add(e, 2 * e, live);
  }
  const tt::LiveCurve c = b.finish();
  EXPECT_LE(c.events.size(), 2 * tt::LiveCurveBuilder::kMaxBuckets + 1);
  EXPECT_GT(c.events.size(), tt::LiveCurveBuilder::kMaxBuckets / 2);
  ASSERT_EQ(c.events.size(), c.liveBytes.size());
  ASSERT_EQ(c.events.size(), c.ns.size());
  for (std::size_t i = 1; i < c.events.size(); ++i) ASSERT_LT(c.events[i - 1], c.events[i]);
  for (std::size_t i = 0; i < c.events.size(); ++i) ASSERT_EQ(c.ns[i], 2 * c.events[i]);
  bool spike = false, dip = false;
  for (std::size_t i = 0; i < c.events.size(); ++i) {
    spike |= c.events[i] == 1'234'567 && c.liveBytes[i] == 50'000;
    dip |= c.events[i] == 2'345'678 && c.liveBytes[i] == 3;
  }
  EXPECT_TRUE(spike);
  EXPECT_TRUE(dip);
  EXPECT_EQ(c.events.back(), kEvents);
}

// A long run: 200 moments within one clock stride of even spacing, each with the time of its
// own event, and the peak's event inserted.
TEST(LiveCurve, MomentsOfALongRunCarryTheirEventsTimes) {
  tt::EventClock clock;
  constexpr std::uint64_t kEvents = 5'000'003;
  for (std::uint64_t e = 1; e <= kEvents; ++e) clock.add(e, 3 * e + 7);
  const tt::Moments m = tt::chooseMoments(clock, kEvents, 200, 1'000'001, 3'000'010);
  ASSERT_EQ(m.events.size(), 201u);
  const std::uint64_t stride = 8192;  // 5M events over at most 1,024 samples
  std::size_t j = 0;
  for (std::size_t i = 0; i < m.events.size(); ++i) {
    ASSERT_EQ(m.ns[i], 3 * m.events[i] + 7);
    if (m.events[i] == 1'000'001) continue;  // the peak
    ++j;
    const double target = static_cast<double>(j) * kEvents / 200.0;
    EXPECT_LE(std::abs(static_cast<double>(m.events[i]) - target), stride) << i;
  }
  EXPECT_EQ(m.events.back(), kEvents);
}

TEST(SiteTimeline, AnEmptyTraceHasNoMomentsAndNoCurve) {
  TempDir dir;
  const std::string path = dir.write("empty.trace", encode({})).string();
  tt::SiteStats s;
  (void)tt::computeStats(path, &s);
  EXPECT_TRUE(s.timeline.events.empty());
  EXPECT_TRUE(s.curve.events.empty());
  EXPECT_EQ(s.bySite[0].maxLiveBytes, 0u);
}

}  // namespace
