// `strata tune` end to end on a program whose peak under glibc depends on one setting
// (tune_program.c): the search finds it, repeats itself for a seed, rejects options the
// installed allocator does not know before replaying anything, reports a setting that makes
// an allocator crash and goes on, checks the winner live, and builds the spaces' compositions
// (one that does not compile left out with its reason).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "../compare/json.hpp"
#include "common/process.hpp"
#include "strata_cli.hpp"

namespace {

namespace fs = std::filesystem;
using strata::test::Json;
using strata::test::TempDir;
using Result = strata::test::RunResult;

Result strata(const std::vector<std::string>& args, const strata::test::EnvChanges& env = {}) {
  return strata::test::runStrata(args, env);
}

using strata::test::contains;

// The program's allocations as a trace, through an mtrace log (strata import --from mtrace).
fs::path programTrace(const TempDir& tmp) {
  std::string log = "= Start\n";
  unsigned long next = 0x100000;
  const auto alloc = [&](unsigned long size) {
    next += 0x1000000;
    char line[64];
    std::snprintf(line, sizeof line, "+ %#lx %#lx\n", next, size);
    log += line;
    return next;
  };
  const auto release = [&](unsigned long a) {
    char line[64];
    std::snprintf(line, sizeof line, "- %#lx\n", a);
    log += line;
  };
  release(alloc(4ul << 20));
  std::vector<unsigned long> big, pins, later;
  for (int i = 0; i < 40; ++i) {
    big.push_back(alloc(512ul << 10));
    pins.push_back(alloc(64));
  }
  for (const unsigned long a : big) release(a);
  for (int i = 0; i < 40; ++i) later.push_back(alloc(768ul << 10));
  for (int i = 0; i < 40; ++i) {
    release(later[static_cast<std::size_t>(i)]);
    release(pins[static_cast<std::size_t>(i)]);
  }
  const fs::path text = tmp.write("program.mtrace", log + "= End\n");
  const fs::path trace = tmp.path() / "program.trace";
  const Result r = strata({"import", "--from", "mtrace", text.string(), "-o", trace.string()});
  EXPECT_EQ(r.exitCode(), 0) << r.err;
  return trace;
}

// A small space: glibc's arena count (which does not matter on one thread) and its mmap
// threshold (which does).
fs::path glibcSpace(const TempDir& tmp) {
  return tmp.write("spaces.conf", std::string("[glibc]\n"
                                              "style tunables GLIBC_TUNABLES glibc.malloc.\n"
                                              "option arena_max 1 2\n"
                                              "option mmap_threshold 65536 4194304\n"));
}

const Json& allocator(const Json& j, const std::string& name) {
  for (const Json& a : j["allocators"].array)
    if (a["name"].string == name) return a;
  throw std::runtime_error("no allocator " + name + " in tune.json");
}

std::vector<std::string> settingsTried(const Json& a) {
  std::vector<std::string> out;
  for (const Json& c : a["candidates"].array) out.push_back(c["setting"].string);
  return out;
}

TEST(Tune, FindsTheSettingThatMattersAndRepeatsItselfForASeed) {
  TempDir tmp;
  const fs::path trace = programTrace(tmp);
  const fs::path spaces = glibcSpace(tmp);
  std::vector<std::vector<std::string>> tried;
  for (int run = 0; run < 2; ++run) {
    const fs::path out = tmp.path() / ("out" + std::to_string(run));
    const Result r = strata({"tune", trace.string(), "--spaces", spaces.string(), "--allocators",
                             "glibc", "--goal", "memory", "--budget", "24", "--repeat", "2",
                             "--seed", "7", "--no-plots", "--out", out.string()});
    ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
    const Json j = strata::test::parseJsonFile(out / "tune.json");
    const Json& glibc = allocator(j, "glibc");
    const Json& best = glibc["best"];
    ASSERT_EQ(best.kind, Json::Object) << r.out;
    EXPECT_TRUE(contains(best["setting"].string, "mmap_threshold=65536")) << r.out;
    EXPECT_LT(best["heap_ratio"].number, 0.75) << r.out;
    EXPECT_TRUE(best["significant"].boolean) << r.out;
    EXPECT_TRUE(contains(r.out, "GLIBC_TUNABLES=glibc.malloc.")) << r.out;
    EXPECT_TRUE(contains(r.out, "strata run --allocator")) << r.out;
    EXPECT_LE(glibc["replays"].number, 24) << "the budget holds";
    tried.push_back(settingsTried(glibc));
  }
  // The settings are tried in an order the seed fixes: the default, then one option at a
  // time (4 settings), then the winners combined.
  ASSERT_GE(tried[0].size(), 5u);
  ASSERT_GE(tried[1].size(), 5u);
  EXPECT_EQ(std::vector<std::string>(tried[0].begin(), tried[0].begin() + 5),
            std::vector<std::string>(tried[1].begin(), tried[1].begin() + 5));
  EXPECT_EQ(tried[0][0], "default");
}

TEST(Tune, OptionsTheInstalledAllocatorDoesNotKnowAreRejectedBeforeTheSearch) {
  TempDir tmp;
  const fs::path trace = programTrace(tmp);
  struct Case {
    std::string space, expect;
  };
  const std::vector<Case> cases = {
      {"[glibc]\nstyle tunables GLIBC_TUNABLES glibc.malloc.\noption arena_maxx 1\n",
       "glibc has no tunable glibc.malloc.arena_maxx"},
      {"[glibc]\nstyle tunables GLIBC_TUNABLES glibc.malloc.\noption arena_max 0\n",
       "value '0' is outside glibc's range"},
      {"[strata]\nstyle env STRATA_\noption purge_delay_ms soon\n", "STRATA_PURGE_DELAY_MS=soon"},
      {"[strata]\nstyle env STRATA_\noption no_such_option 1\n", "'no_such_option' is not recognised"},
      {"[glibc]\noption arena_max 1\n", "[glibc] has no style line"},
      {"[glibc]\nstyle tunables GLIBC_TUNABLES glibc.malloc.\nfrobnicate 1\n", "unknown keyword 'frobnicate'"},
  };
  for (const Case& c : cases) {
    const fs::path spaces = tmp.write("bad.conf", c.space);
    const fs::path out = tmp.path() / "bad-out";
    const Result r = strata({"tune", trace.string(), "--spaces", spaces.string(), "--no-plots",
                             "--out", out.string()});
    EXPECT_EQ(r.exitCode(), 2) << c.space << r.out << r.err;
    EXPECT_TRUE(contains(r.err, c.expect)) << "expected '" << c.expect << "' in: " << r.err;
    EXPECT_FALSE(fs::exists(out / "tune.json")) << "nothing was replayed";
  }
  // The version of the allocator is named.
  const fs::path spaces = tmp.write("bad.conf", std::string("[strata]\nstyle env STRATA_\noption dirty_slots many\n"));
  const Result r = strata({"tune", trace.string(), "--spaces", spaces.string(), "--no-plots", "--out",
                           (tmp.path() / "o").string()});
  EXPECT_TRUE(contains(r.err, "strata (strata ")) << r.err;
}

TEST(Tune, ASettingThatCrashesTheAllocatorIsReportedAndTheSearchGoesOn) {
  TempDir tmp;
  const fs::path trace = programTrace(tmp);
  const fs::path spaces = tmp.write(
      "crash.conf", std::string("[crashy=") + STRATA_TEST_ENV_LIB + "]\nstyle env STRATA_TEST_\n" +
                        "option crash 1 0\n");
  const fs::path out = tmp.path() / "out";
  const Result r = strata({"tune", trace.string(), "--spaces", spaces.string(), "--repeat", "1",
                           "--budget", "20", "--no-plots", "--out", out.string()});
  ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "failed: crash=1: ")) << r.out;
  EXPECT_TRUE(contains(r.out, "SIGSEGV")) << r.out;
  const Json j = strata::test::parseJsonFile(out / "tune.json");
  const std::vector<std::string> tried = settingsTried(allocator(j, "crashy"));
  EXPECT_EQ(tried.size(), 3u) << "the default and both values, the crash in between or not";
}

TEST(Tune, WithACommandTheWinnerIsCheckedLive) {
  TempDir tmp;
  const fs::path spaces = glibcSpace(tmp);
  const fs::path out = tmp.path() / "out";
  const Result r = strata({"tune", "--spaces", spaces.string(), "--allocators", "glibc", "--goal",
                           "memory", "--budget", "24", "--repeat", "2", "--no-plots", "--out",
                           out.string(), "--", STRATA_TEST_TUNE_PROGRAM});
  ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "Live check")) << r.out;
  const Json j = strata::test::parseJsonFile(out / "tune.json");
  ASSERT_EQ(j["live"].array.size(), 1u) << r.out;
  const Json& live = j["live"].array[0];
  EXPECT_TRUE(live["ok"].boolean) << live["detail"].string;
  // The recommended setting lowers the live peak RSS as the replay predicted.
  EXPECT_LT(live["best_rss_bytes"].number, 0.85 * live["default_rss_bytes"].number) << r.out;
}

TEST(Tune, CompositionsAreBuiltAndMeasuredAndOneThatDoesNotCompileIsSkippedWithItsReason) {
  TempDir tmp;
  const fs::path trace = programTrace(tmp);
  const fs::path spaces = tmp.write(
      "compositions.conf",
      std::string("[compositions]\n"
                  "composition kingsley strata::ForkSafeHeap<strata::SelectMmapHeap<131072,"
                  "strata::KingsleyHeap<strata::SbrkHeap<68719476736>>,strata::MmapHeap,true>>\n"
                  "composition broken strata::NoSuchHeap<strata::MmapHeap>\n"));
  const fs::path out = tmp.path() / "out";
  const Result r = strata({"tune", trace.string(), "--spaces", spaces.string(), "--compositions",
                           "--repeat", "1", "--budget", "8", "--no-plots", "--out", out.string()});
  ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "strata tune: building the composition kingsley")) << r.err;
  EXPECT_TRUE(contains(r.err, "strata tune: building the composition broken")) << r.err;
  EXPECT_TRUE(fs::exists(out / "compositions" / "libkingsley.so"));
  EXPECT_FALSE(fs::exists(out / "compositions" / "libbroken.so"));
  const Json j = strata::test::parseJsonFile(out / "tune.json");
  const Json& kingsley = allocator(j, "kingsley");
  EXPECT_TRUE(kingsley["composition"].boolean);
  EXPECT_GE(kingsley["replays"].number, 1) << r.out;
  // The broken one: left out, with the build's first line and where the whole log is.
  bool skipped = false;
  for (const Json& line : j["skipped"].array)
    if (contains(line.string, "broken (") && contains(line.string, "strata build failed: ") &&
        contains(line.string, "does not compile") && contains(line.string, "broken.build.log"))
      skipped = true;
  EXPECT_TRUE(skipped) << r.out;
  EXPECT_TRUE(contains(strata::test::slurp(out / "compositions" / "broken.build.log"), "NoSuchHeap"));
}

TEST(Tune, WrongInvocationsSayWhy) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"tune"}, "give the TRACE files to tune on"},
      {{"tune", "x.trace", "--goal", "speed"}, "invalid value 'speed' for --goal"},
      {{"tune", "x.trace", "--budget", "0"}, "invalid value '0' for --budget"},
      {{"tune", "x.trace", "--budget", "5h"}, "invalid value '5h' for --budget"},
      {{"tune", "x.trace", "--allocators", "ptmalloc"}, "no search space for allocator 'ptmalloc'"},
  };
  for (const auto& [args, expect] : cases) {
    const Result r = strata(args);
    EXPECT_EQ(r.exitCode(), 2) << expect;
    EXPECT_TRUE(contains(r.err, expect)) << "expected '" << expect << "' in: " << r.err;
  }
}

}  // namespace
