// drag.json (toolkit/drag/drag_json.hpp), written by writeDragReport beside report.txt and
// curves.csv from hand-made analyses: every key of strata-drag-1 there, the figures the same
// as report.txt's, the sites with their stacks, a process not analysed with null figures, and
// an unbounded drag as null.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "../compare/json.hpp"
#include "drag/drag_analysis.hpp"
#include "drag/drag_report.hpp"
#include "drag_test_util.hpp"

namespace {

using namespace dragtest;
using strata::drag::DragProcess;
using strata::drag::DragRunFacts;
using strata::test::Json;

// The keys a key set must have exactly.
std::vector<std::string> keys(const Json& j) {
  std::vector<std::string> out;
  for (const auto& [k, v] : j.object) out.push_back(k);
  return out;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Two processes: 100 analysed (the sites trace of the analysis tests: drag 3, peaks 300 and
// 200, site 1 all of the drag), 200 not analysed. Writes the report into dir/out.
struct Written {
  Json json;
  std::string report;
};
Written writeReport(const TempDir& dir, const std::vector<unsigned char>& trace,
                    const std::vector<Rec>& recs, bool succeeded) {
  DragRunFacts facts{"./app --flag", succeeded ? "exit 0" : "signal 11 (SIGSEGV)", 1.25,
                     succeeded, dir.path() / "out", 10, {"a note of the run"}};
  std::filesystem::create_directories(facts.dir);
  std::vector<DragProcess> processes(2);
  processes[0].pid = 100;
  processes[0].program = "app";
  processes[0].trace = dir.path() / "t.trace";
  processes[0].analysed = true;
  processes[0].lastUse = lastUse(recs);
  processes[0].result = analyze(dir, trace, recs);
  processes[1].pid = 200;
  processes[1].program = "helper";
  // The report is printed too: stdout to /dev/null meanwhile, and back.
  std::fflush(stdout);
  const int saved = ::dup(STDOUT_FILENO);
  const int null = ::open("/dev/null", O_WRONLY);
  ::dup2(null, STDOUT_FILENO);
  strata::drag::writeDragReport(facts, processes, processes[0], {});
  std::fflush(stdout);
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  ::close(null);
  return {strata::test::parseJsonFile(facts.dir / "drag.json"), slurp(facts.dir / "report.txt")};
}

const std::vector<unsigned char>& sitesTraceOfTests() {
  static const std::vector<unsigned char> trace =
      sitesTrace({ev(Op::Malloc, 100), ev(Op::Malloc, 100), ev(Op::Malloc, 100),
                  ev(Op::Free, 0, kNoObject, 1), ev(Op::Free, 0, kNoObject, 2),
                  ev(Op::Free, 0, kNoObject, 0)},
                 {1, 2, 2});
  return trace;
}

TEST(DragJson, HasEveryKeyAndTheReportsFigures) {
  TempDir dir;
  const Written w = writeReport(dir, sitesTraceOfTests(), {{1, 2, 3}, {2, 3, 4}, {0, 0, 5}}, true);
  const Json& j = w.json;
  EXPECT_EQ(sorted(keys(j)), sorted({"format", "command", "status", "seconds", "succeeded",
                                     "notes", "processes", "shown", "curves_file", "sites"}));
  EXPECT_EQ(j["format"].string, "strata-drag-1");
  EXPECT_EQ(j["command"].string, "./app --flag");
  EXPECT_EQ(j["status"].string, "exit 0");
  EXPECT_EQ(j["seconds"].number, 1.25);
  EXPECT_TRUE(j["succeeded"].boolean);
  ASSERT_EQ(j["notes"].array.size(), 1u);
  EXPECT_EQ(j["notes"].array[0].string, "a note of the run");
  EXPECT_TRUE(contains(w.report, "note: a note of the run"));
  EXPECT_EQ(j["curves_file"].string, "curves.csv");
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "out" / j["curves_file"].string));

  const Json& s = j["shown"];
  EXPECT_EQ(sorted(keys(s)),
            sorted({"pid", "program", "drag", "drag_unbounded", "actual_area", "ideal_area",
                    "peak_actual_bytes", "peak_ideal_bytes", "increase_percent", "final_clock",
                    "objects", "events", "uncovered_objects", "uncovered_bytes",
                    "trace_complete", "last_use_complete"}));
  EXPECT_EQ(s["pid"].number, 100);
  EXPECT_EQ(s["drag"].number, 3.0);
  EXPECT_TRUE(contains(w.report, "total drag         3.000"));
  EXPECT_EQ(s["actual_area"].number, 30000);
  EXPECT_EQ(s["ideal_area"].number, 10000);
  EXPECT_EQ(s["peak_actual_bytes"].number, 300);
  EXPECT_TRUE(contains(w.report, "peak live          300 B"));
  EXPECT_EQ(s["peak_ideal_bytes"].number, 200);
  EXPECT_TRUE(contains(w.report, "peak if freed      200 B"));
  EXPECT_EQ(s["increase_percent"].number, 50);
  EXPECT_TRUE(contains(w.report, "increase           50.0%"));
  EXPECT_EQ(s["final_clock"].number, 300);
  EXPECT_EQ(s["objects"].number, 3);
  EXPECT_EQ(s["events"].number, 6);
  EXPECT_TRUE(contains(w.report, "3, 300 B allocated over 6 events"));
  EXPECT_TRUE(s["trace_complete"].boolean);
  EXPECT_TRUE(s["last_use_complete"].boolean);
  EXPECT_FALSE(s["drag_unbounded"].boolean);
}

TEST(DragJson, ListsEveryProcessAndTheSitesByDrag) {
  TempDir dir;
  const Written w = writeReport(dir, sitesTraceOfTests(), {{1, 2, 3}, {2, 3, 4}, {0, 0, 5}}, true);
  const std::vector<Json>& ps = w.json["processes"].array;
  ASSERT_EQ(ps.size(), 2u);
  const std::vector<std::string> processKeys =
      sorted({"pid", "program", "analysed", "shown", "drag", "drag_unbounded",
              "peak_actual_bytes", "peak_ideal_bytes", "increase_percent"});
  EXPECT_EQ(sorted(keys(ps[0])), processKeys);
  EXPECT_EQ(sorted(keys(ps[1])), processKeys);
  EXPECT_TRUE(ps[0]["shown"].boolean);
  EXPECT_TRUE(ps[0]["analysed"].boolean);
  EXPECT_EQ(ps[0]["drag"].number, 3.0);
  EXPECT_EQ(ps[0]["increase_percent"].number, 50);
  EXPECT_EQ(ps[1]["program"].string, "helper");
  EXPECT_FALSE(ps[1]["shown"].boolean);
  EXPECT_FALSE(ps[1]["analysed"].boolean);
  EXPECT_EQ(ps[1]["drag"].kind, Json::Null);
  EXPECT_EQ(ps[1]["peak_actual_bytes"].kind, Json::Null);

  // Site 1 holds all the drag; site 2 none, so it is not listed (as in the text).
  const std::vector<Json>& sites = w.json["sites"].array;
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_EQ(sorted(keys(sites[0])),
            sorted({"site", "drag", "share_percent", "bytes", "objects", "stack"}));
  EXPECT_EQ(sites[0]["site"].number, 1);
  EXPECT_EQ(sites[0]["drag"].number, 20000);
  EXPECT_EQ(sites[0]["share_percent"].number, 100);
  EXPECT_TRUE(contains(w.report, "site 1: 100.0% of the drag, 100 B in 1 objects"));
  EXPECT_EQ(sites[0]["bytes"].number, 100);
  EXPECT_EQ(sites[0]["objects"].number, 1);
  ASSERT_EQ(sites[0]["stack"].array.size(), 1u);  // site 1's one frame
  EXPECT_EQ(sorted(keys(sites[0]["stack"].array[0])),
            sorted({"function", "file", "line", "module"}));
  EXPECT_TRUE(contains(w.report, "drag.json"));
}

TEST(DragJson, AnUnboundedDragIsNullAndAFailedRunIsNoted) {
  TempDir dir;
  // 0 malloc 100 -> id0, never used after its creation; 1 malloc 50 -> id1, same; both freed
  // at the end: the ideal area is 0, so the drag has no bound. No sites recorded.
  const Written w = writeReport(
      dir, encode({ev(Op::Malloc, 100), ev(Op::Malloc, 50), ev(Op::Free, 0, kNoObject, 0),
                   ev(Op::Free, 0, kNoObject, 1)}),
      {{0, 0, 2}, {1, 1, 3}}, false);
  const Json& s = w.json["shown"];
  EXPECT_TRUE(s["drag_unbounded"].boolean);
  EXPECT_EQ(s["drag"].kind, Json::Null);
  EXPECT_TRUE(contains(w.report, "total drag         infinite"));
  EXPECT_EQ(w.json["processes"].array[0]["drag"].kind, Json::Null);
  EXPECT_TRUE(w.json["processes"].array[0]["drag_unbounded"].boolean);
  EXPECT_FALSE(w.json["succeeded"].boolean);
  EXPECT_EQ(w.json["status"].string, "signal 11 (SIGSEGV)");
  EXPECT_EQ(w.json["notes"].array.size(), 2u);  // the run's, and that it did not finish
  EXPECT_TRUE(w.json["sites"].array.empty());
}

}  // namespace
