// The diff model (toolkit/diff) on traces and compare folders written by hand: sites matched
// across runs whose ids and addresses differ, the deltas and their order, the threshold, the
// program check, the folder readers' errors, a series file's curve and the JSON renderer.
#include <algorithm>
#include <fstream>
#include <string>

#include "diff/diff_curve.hpp"
#include "diff_fixtures.hpp"
#include "diff/diff_model.hpp"
#include "support/error.hpp"
#include "support/json_value.hpp"

namespace {

using namespace difftest;
namespace diff = strata::diff;

// Stacks (offsets in libapp.so): grow <- main, keep <- main, fresh.
const Stack kGrow{0x100, 0x200}, kKeep{0x300, 0x200}, kFresh{0x400};

// A: grow holds 1,000 B at the peak (and allocated 50 B freed before), keep 500 B.
// B: the sites defined in another order, the module elsewhere; grow holds 3,000 B, keep
// 500 B, and a site A lacks 200 B.
struct TracePair {
  TempDir dir;
  std::string a, b;
  TracePair(const std::string& programA = "/usr/bin/app",
            const std::string& programB = "/usr/bin/app") {
    a = writeTrace(dir, "a.trace", programA, {kGrow, kKeep},
                   {{0, 50, true}, {0, 1000, false}, {1, 500, false}});
    b = writeTrace(dir, "b.trace", programB, {kFresh, kKeep, kGrow},
                   {{2, 3000, false}, {1, 500, false}, {0, 200, false}}, 0x7f0000);
  }
};

std::string errorOf(auto&& f) {
  try {
    f();
  } catch (const strata::support::Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(DiffTraces, SitesMatchByStackAcrossIdsAndAddresses) {
  TracePair p;
  const diff::DiffResult r = diff::diffTraces(p.a, p.b, {});
  EXPECT_EQ(r.a.peakLiveBytes, 1500u);
  EXPECT_EQ(r.b.peakLiveBytes, 3700u);
  EXPECT_EQ(r.a.allocations, 3u);
  EXPECT_EQ(r.a.program, "/usr/bin/app");
  EXPECT_NEAR(r.peakGrowthPercent, 146.667, 0.01);
  ASSERT_TRUE(r.sitesCompared);
  ASSERT_EQ(r.sites.size(), 3u);            // grow and keep matched, fresh in B only
  const diff::SiteDiff& grow = r.sites[0];  // the largest change in peak-live bytes first
  ASSERT_EQ(grow.stack.size(), 2u);
  EXPECT_EQ(grow.stack[0].module, "libapp.so");
  EXPECT_EQ(grow.stack[0].offset, 0x100u);  // address - bias, the same in both runs
  EXPECT_EQ(grow.a.peakLiveBytes, 1000u);
  EXPECT_EQ(grow.b.peakLiveBytes, 3000u);
  EXPECT_EQ(grow.a.bytes, 1050u);
  EXPECT_EQ(grow.b.bytes, 3000u);
  EXPECT_EQ(grow.allocationsChange(), -1);
  const diff::SiteDiff& fresh = r.sites[1];
  EXPECT_EQ(fresh.stack.size(), 1u);
  EXPECT_EQ(fresh.a.bytes, 0u);
  EXPECT_EQ(fresh.b.peakLiveBytes, 200u);
  EXPECT_EQ(r.sites[2].peakLiveChange(), 0);  // keep: unchanged, last
  EXPECT_EQ(r.sites[2].a.peakLiveBytes, 500u);
  ASSERT_EQ(r.curves.size(), 2u);
  EXPECT_EQ(r.curves[1].run, "b");
  EXPECT_DOUBLE_EQ(*std::max_element(r.curves[1].ys.begin(), r.curves[1].ys.end()), 3700.0);
}

TEST(DiffTraces, ThresholdCountsThePeakAndLargeSitesOnly) {
  TracePair p;
  diff::DiffResult r =
      diff::diffTraces(p.a, p.b, {.allowDifferentPrograms = false, .thresholdPercent = 20.0});
  EXPECT_TRUE(r.failed);
  // The peak (+146.7 %) and grow (+2,000 B = 133 % of A's peak); fresh's 200 B (13 %) no.
  ASSERT_EQ(r.failures.size(), 2u);
  EXPECT_NE(r.failures[0].find("peak live bytes grew by 146.7 %"), std::string::npos)
      << r.failures[0];
  EXPECT_NE(r.failures[1].find("133.3 % of A's peak"), std::string::npos) << r.failures[1];
  r = diff::diffTraces(p.a, p.b, {.allowDifferentPrograms = false, .thresholdPercent = 150.0});
  EXPECT_FALSE(r.failed);
  EXPECT_TRUE(r.failures.empty());
  r = diff::diffTraces(p.b, p.a, {.allowDifferentPrograms = false, .thresholdPercent = 0.0});
  EXPECT_FALSE(r.failed) << "a shrinking run passes any threshold";
}

TEST(DiffTraces, DifferentProgramsAreAnErrorUnlessAllowed) {
  TracePair p("/usr/bin/python3", "/usr/bin/perl");
  EXPECT_EQ(errorOf([&] { diff::diffTraces(p.a, p.b, {}); }),
            "A is a trace of /usr/bin/python3, B of /usr/bin/perl: diff compares two runs of one "
            "program (--allow-different-programs to compare anyway)");
  EXPECT_EQ(diff::diffTraces(p.a, p.b, {.allowDifferentPrograms = true, .thresholdPercent = {}})
                .sites.size(),
            3u);
  TracePair moved("/usr/bin/app", "/opt/new/bin/app");  // the same name elsewhere: one program
  EXPECT_NO_THROW(diff::diffTraces(moved.a, moved.b, {}));
}

TEST(DiffTraces, AnUnreadableTraceNamesTheFile) {
  TracePair p;
  const std::string bytes = slurp(p.b);
  const std::string cut = p.dir.write("cut.trace", bytes.substr(0, bytes.size() / 2)).string();
  const std::string e = errorOf([&] { diff::diffTraces(p.a, cut, {}); });
  EXPECT_EQ(e.rfind(cut + ": ", 0), 0u) << e;
  EXPECT_NE(errorOf([&] {
              diff::runDiff(p.a, p.dir / "missing", {}, p.dir / "out");
            }).find("missing: no such"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              diff::runDiff(p.a, p.dir.path().string(), {}, p.dir / "out");
            }).find("A is a trace"),
            std::string::npos);
}

TEST(DiffFolders, AllocatorsCurvesAndSitesSideBySide) {
  TempDir dir;
  const std::string a = writeFolder(
      dir, "a", resultsJson("app", "/usr/bin/app", 1500, 9000, 4096, 8192, "app-sites.json"),
      sitesJson(1000, 500, false));
  const std::string b = writeFolder(
      dir, "b", resultsJson("app", "/usr/bin/app", 4500, 9000, 8192, 8192, "app-sites.json"),
      sitesJson(4000, 500, true));
  const diff::DiffResult r =
      diff::diffFolders(a, b, {.allowDifferentPrograms = false, .thresholdPercent = 50.0});
  EXPECT_EQ(r.a.kind, "results");
  EXPECT_EQ(r.b.peakLiveBytes, 4500u);
  ASSERT_EQ(r.traces.size(), 1u);
  ASSERT_EQ(r.allocators.size(), 2u);
  EXPECT_EQ(r.allocators[0].allocator, "glibc");
  EXPECT_DOUBLE_EQ(r.allocators[0].b.peakHeapBytes, 8192.0);
  EXPECT_DOUBLE_EQ(r.allocators[0].a.fragmentationPercent, 20.0);
  ASSERT_EQ(r.curves.size(), 4u);  // two allocators, two runs
  EXPECT_EQ(r.curves[0].label, "app: glibc heap bytes");
  EXPECT_EQ(r.curves[0].xs, (std::vector<double>{1024, 2048}));
  ASSERT_TRUE(r.sitesCompared);
  ASSERT_EQ(r.sites.size(), 2u);  // matched by function/file/line although the indices differ
  EXPECT_EQ(r.sites[0].stack[0].function, "grow");
  EXPECT_EQ(r.sites[0].trace, "app");
  EXPECT_EQ(r.sites[0].peakLiveChange(), 3000);
  EXPECT_EQ(r.sites[1].peakLiveChange(), 0);
  // Peak live +200 %, grow +3,000 B = 200 % of A's peak, glibc's heap +100 %; strata's 0 %.
  ASSERT_EQ(r.failures.size(), 3u);
  EXPECT_NE(r.failures[2].find("allocator glibc: peak heap grew by 100.0 %"), std::string::npos)
      << r.failures[2];
}

TEST(DiffFolders, BadResultsNameTheFile) {
  TempDir dir;
  const std::string good = resultsJson("app", "", 1, 1, 1, 1);
  const std::string a = writeFolder(dir, "a", good);
  const std::string cut = writeFolder(dir, "cut", good.substr(0, good.size() / 2));
  std::string e = errorOf([&] { diff::diffFolders(a, cut, {}); });
  EXPECT_NE(e.find(cut + "/results.json"), std::string::npos) << e;
  EXPECT_NE(e.find("truncated"), std::string::npos) << e;
  std::string v2 = good;
  v2.replace(v2.find("compare-1"), 9, "compare-2");
  const std::string other = writeFolder(dir, "other", v2);
  e = errorOf([&] { diff::diffFolders(a, other, {}); });
  EXPECT_NE(e.find("format strata-compare-2, but this strata diff reads strata-compare-1"),
            std::string::npos)
      << e;
  dir.write("empty/x", std::string("x"));
  e = errorOf([&] { diff::diffFolders(dir / "empty", a, {}); });
  EXPECT_NE(e.find("empty/results.json: missing"), std::string::npos) << e;
  const std::string perl =
      writeFolder(dir, "perl", resultsJson("app", "/usr/bin/perl", 1, 1, 1, 1));
  const std::string python =
      writeFolder(dir, "python", resultsJson("app", "/usr/bin/python3", 1, 1, 1, 1));
  e = errorOf([&] { diff::diffFolders(perl, python, {}); });
  EXPECT_NE(e.find("A is a result folder of /usr/bin/perl, B of /usr/bin/python3"),
            std::string::npos)
      << e;
}

TEST(DiffCurve, DownsamplingKeepsThePeakAndTheDip) {
  TempDir dir;
  const std::string path = dir / "series.csv";
  {
    std::ofstream out(path);
    out << "seconds,event,heap_bytes,live_bytes\n";
    for (int i = 0; i < 100000; ++i)
      out << i * 1e-6 << ',' << i << ',' << (i == 77777 ? 1000000000 : (i == 1234 ? 0 : 100 + i % 100))
          << ",0\n";
  }
  const diff::Curve c = diff::csvCurve(path, "event", "heap_bytes");
  EXPECT_LE(c.xs.size(), diff::kCurvePoints);
  EXPECT_DOUBLE_EQ(*std::max_element(c.ys.begin(), c.ys.end()), 1e9);
  EXPECT_DOUBLE_EQ(*std::min_element(c.ys.begin(), c.ys.end()), 0);
  EXPECT_TRUE(std::is_sorted(c.xs.begin(), c.xs.end()));
  EXPECT_EQ(c.x, "events");
}

TEST(DiffJson, TheDocumentHasTheFormatsKeys) {
  TracePair p;
  const diff::DiffResult r =
      diff::diffTraces(p.a, p.b, {.allowDifferentPrograms = false, .thresholdPercent = 20.0});
  const auto doc = strata::support::parseJson(diff::renderJson(r, 2));
  ASSERT_TRUE(doc);
  for (const char* key : {"format", "a", "b", "peak_growth_percent", "threshold_percent", "failed",
                          "failures", "sites", "curves", "allocators"})
    EXPECT_NE(doc->find(key), nullptr) << key;
  EXPECT_EQ((*doc)["format"].string(), "strata-diff-1");
  EXPECT_EQ((*doc)["a"]["kind"].string(), "trace");
  EXPECT_EQ((*doc)["b"]["peak_live_bytes"].unsignedNumber(), 3700u);
  EXPECT_DOUBLE_EQ((*doc)["threshold_percent"].number(), 20.0);
  EXPECT_TRUE((*doc)["failed"].boolean());
  ASSERT_EQ((*doc)["sites"].items().size(), 2u);  // capped
  const auto& site = (*doc)["sites"].items()[0];
  EXPECT_EQ(site["b"]["peak_live_bytes"].unsignedNumber(), 3000u);
  EXPECT_EQ(site["stack"].items()[0]["module"].string(), "libapp.so");
  EXPECT_EQ((*doc)["curves"].items()[0]["x"].string(), "events");
  const std::string text = diff::renderText(r, 20);
  EXPECT_NE(text.find("+2.0 KiB"), std::string::npos) << text;  // grow's change at the peak
  EXPECT_NE(text.find("FAILED (2)"), std::string::npos) << text;
}

}  // namespace
