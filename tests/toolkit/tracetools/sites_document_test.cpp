// The sites document (sites_document.hpp) on traces built by hand (timeline_traces.hpp): which
// sites it lists, what "other" sums, that sites plus other give the trace's totals, the
// frames deduplicated across stacks, the timeline and curve as written, and that it parses.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "support/error.hpp"
#include "support/json_value.hpp"
#include "tracetools/sites_document.hpp"
#include "test_util.hpp"
#include "timeline_traces.hpp"
#include "tracetools/trace_stats.hpp"

namespace {

using namespace tttest;
namespace tt = strata::tracetools;
using strata::support::JsonValue;
using U = std::vector<std::uint64_t>;

struct Doc {
  tt::TraceStats stats;
  tt::SiteStats sites;
  JsonValue json;
};

Doc document(const std::string& path, std::size_t perFigure) {
  Doc d;
  d.stats = tt::computeStats(path, &d.sites);
  const std::string text = tt::sitesDocument(path, d.stats, d.sites, perFigure);
  strata::support::JsonError error;
  const auto parsed = strata::support::parseJson(text, &error);
  EXPECT_TRUE(parsed.has_value()) << error.message << " at " << error.offset << "\n" << text;
  if (parsed) d.json = *parsed;
  return d;
}

U numbers(const JsonValue& array) {
  U out;
  for (const JsonValue& v : array.items()) out.push_back(v.unsignedNumber(~0ull));
  return out;
}

// The sum of `key` over the listed sites and "other".
std::uint64_t summed(const JsonValue& doc, const char* key) {
  std::uint64_t total = doc["other"][key].unsignedNumber();
  for (const JsonValue& s : doc["sites"].items()) total += s[key].unsignedNumber();
  return total;
}

void expectTotals(const Doc& d) {
  EXPECT_EQ(summed(d.json, "allocations"), d.stats.totalObjects);
  EXPECT_EQ(summed(d.json, "bytes"), d.stats.totalBytes);
  EXPECT_EQ(summed(d.json, "peak_live_bytes"), d.stats.peakLiveBytes);
  EXPECT_EQ(summed(d.json, "never_freed_objects"), d.stats.neverFreed);
}

// One of each figure's top site: sites 1 (bytes, peak, never freed, largest live) and 2
// (allocations, temporary); 3 and 4 are "other".
TEST(SitesDocument, ListsEachFiguresTopAndSumsTheRestIntoOther) {
  TempDir dir;
  const std::string path = mixedTrace(dir);
  const Doc d = document(path, 1);
  const JsonValue& j = d.json;
  EXPECT_EQ(j["format"].string(), "strata-sites-1");
  EXPECT_EQ(j["trace"].string(), path);
  EXPECT_EQ(j["events"].unsignedNumber(), 12u);
  EXPECT_EQ(j["duration_ns"].unsignedNumber(), 120u);
  EXPECT_EQ(j["peak_event"].unsignedNumber(), 8u);
  EXPECT_EQ(j["peak_live_bytes"].unsignedNumber(), 1050u);
  EXPECT_EQ(j["total_sites"].unsignedNumber(), 4u);
  const auto& sites = j["sites"].items();
  ASSERT_EQ(sites.size(), 2u);
  EXPECT_EQ(sites[0]["id"].unsignedNumber(), 1u);  // 1000 of 1001 bytes never freed
  EXPECT_EQ(sites[1]["id"].unsignedNumber(), 2u);
  EXPECT_EQ(sites[1]["allocations"].unsignedNumber(), 4u);
  EXPECT_EQ(sites[1]["temporary_allocations"].unsignedNumber(), 3u);
  EXPECT_EQ(sites[1]["temporary_bytes"].unsignedNumber(), 24u);
  EXPECT_EQ(sites[1]["never_freed_bytes"].unsignedNumber(), 1u);
  const JsonValue& other = j["other"];
  EXPECT_EQ(other["sites"].unsignedNumber(), 2u);
  EXPECT_EQ(other["allocations"].unsignedNumber(), 2u);
  EXPECT_EQ(other["bytes"].unsignedNumber(), 70u);
  EXPECT_EQ(other["peak_live_bytes"].unsignedNumber(), 50u);  // site 3's object at the peak
  EXPECT_EQ(other["temporary_allocations"].unsignedNumber(), 1u);
  EXPECT_EQ(other["temporary_bytes"].unsignedNumber(), 50u);
  EXPECT_EQ(other["never_freed_bytes"].unsignedNumber(), 0u);
  EXPECT_EQ(other["max_live_bytes"].unsignedNumber(), 50u);
  expectTotals(d);
  // Only the listed sites' frames, each address once: 0x1000, 0x2000, 0x3000 (in no module).
  const auto& frames = j["frames"].items();
  ASSERT_EQ(frames.size(), 3u);
  U offsets;
  for (const JsonValue& f : frames) {
    EXPECT_EQ(f["module"].string(), "");
    offsets.push_back(f["offset"].unsignedNumber());
  }
  const U s1 = numbers(sites[0]["stack"]), s2 = numbers(sites[1]["stack"]);
  ASSERT_EQ(s1.size(), 1u);
  ASSERT_EQ(s2.size(), 2u);
  EXPECT_EQ(offsets[s1[0]], 0x1000u);
  EXPECT_EQ(offsets[s2[0]], 0x2000u);
  EXPECT_EQ(offsets[s2[1]], 0x3000u);
  // The timeline: every event a moment, rows in the sites' order, the rest summed.
  const JsonValue& t = j["timeline"];
  EXPECT_EQ(numbers(t["events"]), (U{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
  EXPECT_EQ(numbers(t["ns"]), (U{10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120}));
  ASSERT_EQ(t["live_bytes"].items().size(), 2u);
  EXPECT_EQ(numbers(t["live_bytes"].items()[0]), U(12, 1000));
  EXPECT_EQ(numbers(t["live_bytes"].items()[1]), (U{0, 8, 0, 8, 0, 8, 0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(numbers(t["other_live_bytes"]), (U{0, 0, 0, 0, 0, 0, 0, 50, 0, 20, 20, 0}));
  // The curve: its largest point is the peak.
  const U curve = numbers(j["curve"]["live_bytes"]);
  ASSERT_EQ(curve.size(), 12u);
  EXPECT_EQ(curve[7], 1050u);
  EXPECT_EQ(*std::max_element(curve.begin(), curve.end()), 1050u);
}

// A frame shared by two stacks is one entry of "frames": site 3 = {0x1000, 0x3000}.
TEST(SitesDocument, StacksShareTheirFrames) {
  TempDir dir;
  const Doc d = document(smallTrace(dir), tt::kListedPerFigure);
  ASSERT_EQ(d.json["sites"].items().size(), 3u);
  EXPECT_EQ(d.json["frames"].items().size(), 3u);
  std::vector<U> stacks(4);
  for (const JsonValue& s : d.json["sites"].items())
    stacks.at(s["id"].unsignedNumber()) = numbers(s["stack"]);
  EXPECT_EQ(stacks[3], (U{stacks[1][0], stacks[2][1]}));
  // Every site listed: no "other", no other_live_bytes, the sums the trace's totals.
  EXPECT_EQ(d.json.find("other"), nullptr);
  EXPECT_EQ(d.json["timeline"].find("other_live_bytes"), nullptr);
  expectTotals(d);
}

TEST(SitesDocument, ListedSitesAreOrderedByTheirLargestShare) {
  TempDir dir;
  tt::SiteStats s;
  (void)tt::computeStats(spikeTrace(dir), &s);
  // Site 2: 497 of the 498 temporary allocations; site 1: 1000 of the 1008 bytes never freed;
  // site 3: 5000 of the 6008 bytes live at the peak.
  EXPECT_EQ(tt::listedSites(s), (U{2, 1, 3}));
  EXPECT_EQ(tt::listedSites(s, 1), (U{2, 1, 3}));
  const tt::OtherSites none = tt::otherSites(s, tt::listedSites(s));
  EXPECT_EQ(none.sites, 0u);
  EXPECT_EQ(none.liveBytes, U(s.timeline.events.size(), 0));
}

TEST(SitesDocument, AFileThatCannotBeWrittenIsNamed) {
  TempDir dir;
  tt::SiteStats s;
  const std::string path = smallTrace(dir);
  const tt::TraceStats st = tt::computeStats(path, &s);
  const std::string target = (dir.path() / "missing" / "sites.json").string();
  try {
    tt::writeSitesDocument(target, path, st, s);
    FAIL() << "no error";
  } catch (const strata::support::Error& e) {
    EXPECT_NE(std::string(e.what()).find(target), std::string::npos) << e.what();
  }
  tt::writeSitesDocument(dir / "sites.json", path, st, s);
  EXPECT_TRUE(strata::support::parseJson(slurp(dir / "sites.json")).has_value());
}

}  // namespace
