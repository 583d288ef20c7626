// tune.json (tuneJson, toolkit/tune/tune_json.cpp) from a hand-made report: "format" first,
// "app" and "candidates_file", every candidate with the two command lines that use it (the
// same as tune_report.hpp's functions give), and the keys that were there before.
#include <gtest/gtest.h>

#include <string>

#include "common/flat_json.hpp"
#include "../compare/json.hpp"
#include "tune/tune_report.hpp"

namespace {

using strata::test::Json;
using strata::test::JsonParser;
namespace tune = strata::tune;

tune::Candidate candidate(const std::string& description, const std::string& spec,
                          std::vector<std::string> environment, double seconds, bool isDefault) {
  tune::Candidate c;
  c.description = description;
  c.spec = spec;
  c.environment = std::move(environment);
  c.isDefault = isDefault;
  c.measure.ok = true;
  c.measure.time = seconds;
  c.measure.heap = 1 << 20;
  return c;
}

// jemalloc with its default and one setting that wins; the app a command with a space.
tune::TuneReport report() {
  tune::TuneReport r;
  r.appLine = "./app 'two words'";
  r.budgetText = "40 replays";
  r.spacesPath = "tune-spaces.conf";
  r.settings.traces = {"app.trace"};
  tune::AllocatorRun run;
  run.name = "jemalloc";
  run.library = "/usr/lib/libjemalloc.so.2";
  run.candidates.push_back(candidate("default", "jemalloc", {}, 2.0, true));
  run.candidates.push_back(candidate("narenas=1", "jemalloc:narenas=1",
                                     {"MALLOC_CONF=narenas:1"}, 1.0, false));
  run.verdict.candidate = 1;
  run.verdict.significant = true;
  run.verdict.timeRatio = 0.5;
  r.runs.push_back(run);
  return r;
}

TEST(TuneJson, StartsWithTheFormatAndNamesTheApp) {
  const tune::TuneReport r = report();
  const std::string text = tune::tuneJson(r);
  EXPECT_EQ(flatJson(text).rfind("{\"format\": \"strata-tune-1\", ", 0), 0u) << text.substr(0, 80);
  const Json j = JsonParser(text).parse();
  EXPECT_EQ(j["format"].string, "strata-tune-1");
  EXPECT_EQ(j["app"].string, "./app 'two words'");
  EXPECT_EQ(j["candidates_file"].string, "candidates.csv");
  // The keys there before.
  for (const char* key : {"goal", "seed", "budget", "repeat", "spaces", "traces",
                          "glibc_default", "skipped", "allocators", "live"})
    EXPECT_TRUE(j.has(key)) << key;
  EXPECT_EQ(j["budget"].string, "40 replays");
  EXPECT_EQ(j["traces"].array.at(0).string, "app.trace");
}

TEST(TuneJson, EveryCandidateHasItsCommandLines) {
  const tune::TuneReport r = report();
  const Json j = JsonParser(tune::tuneJson(r)).parse();
  const Json& run = j["allocators"].array.at(0);
  EXPECT_EQ(run["name"].string, "jemalloc");
  const std::vector<Json>& cs = run["candidates"].array;
  ASSERT_EQ(cs.size(), 2u);
  for (std::size_t i = 0; i < cs.size(); ++i) {
    const tune::Candidate& c = r.runs[0].candidates[i];
    EXPECT_EQ(cs[i]["setting"].string, c.description);
    EXPECT_EQ(cs[i]["environment_line"].string, tune::environmentLine(r.runs[0], c, r.appLine));
    EXPECT_EQ(cs[i]["strata_run_line"].string, tune::strataRunLine(c, r.appLine));
    EXPECT_TRUE(cs[i]["measure"]["ok"].boolean);
  }
  EXPECT_EQ(cs[1]["environment_line"].string,
            "LD_PRELOAD=/usr/lib/libjemalloc.so.2 MALLOC_CONF=narenas:1 ./app 'two words'");
  EXPECT_EQ(cs[1]["strata_run_line"].string,
            "strata run --allocator jemalloc:narenas=1 -- ./app 'two words'");
  EXPECT_EQ(run["best"]["setting"].string, "narenas=1");
  EXPECT_EQ(run["best"]["environment_line"].string, cs[1]["environment_line"].string);
  EXPECT_EQ(run["best"]["time_ratio"].number, 0.5);
}

}  // namespace
