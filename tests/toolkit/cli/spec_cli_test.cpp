// Allocator specs applied by the commands that take them: `strata run`, `strata replay` and
// `strata compare` put a spec's library in LD_PRELOAD and its settings in the child's
// environment only, label it readably, and refuse a library that cannot be preloaded or does
// not take over malloc before anything runs. The stand-in library (env_report_preload.c)
// writes the environment it was started with to a file.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "../compare/json.hpp"
#include "common/process.hpp"
#include "strata_cli.hpp"

namespace {

namespace fs = std::filesystem;
using strata::test::slurp;
using strata::test::TempDir;
using Result = strata::test::RunResult;

Result strata(const std::vector<std::string>& args, const strata::test::EnvChanges& env = {}) {
  return strata::test::runStrata(args, env);
}

using strata::test::contains;

// The environments the stand-in library reported, one block per process it was loaded into.
std::vector<std::vector<std::string>> reports(const fs::path& file) {
  std::vector<std::vector<std::string>> all(1);
  std::istringstream in(slurp(file));
  for (std::string line; std::getline(in, line);) {
    if (line == "--") all.emplace_back();
    else all.back().push_back(line);
  }
  all.pop_back();
  return all;
}

bool has(const std::vector<std::string>& env, const std::string& entry) {
  for (const std::string& e : env)
    if (e == entry) return true;
  return false;
}

TEST(SpecCli, RunPreloadsALibraryPathAndSetsItsSettingsInTheChildOnly) {
  TempDir tmp;
  const fs::path report = tmp.path() / "env";
  const std::string spec = std::string("mine=") + STRATA_TEST_ENV_LIB +
                           ":MALLOC_CONF=narenas:1,dirty_decay_ms:0:STRATA_TEST_SETTING=a=b";
  const Result r = strata({"run", "--allocator", spec, "--", "sh", "-c", "echo ran"},
                          {{"STRATA_TEST_ENV_REPORT", report.string()}});
  ASSERT_EQ(r.exitCode(), 0) << r.err;
  EXPECT_EQ(r.out, "ran\n");
  const auto envs = reports(report);
  ASSERT_GE(envs.size(), 1u) << slurp(report);
  EXPECT_TRUE(has(envs[0], std::string("LD_PRELOAD=") + STRATA_TEST_ENV_LIB));
  EXPECT_TRUE(has(envs[0], "MALLOC_CONF=narenas:1,dirty_decay_ms:0"));
  EXPECT_TRUE(has(envs[0], "STRATA_TEST_SETTING=a=b"));
}

TEST(SpecCli, ALibraryThatDoesNotTakeOverMallocIsRefusedBeforeTheCommandRuns) {
  TempDir tmp;
  const fs::path marker = tmp.path() / "ran";
  const Result r = strata({"run", "--allocator", STRATA_TEST_NO_TAKEOVER_LIB, "--", "touch",
                           marker.string()});
  EXPECT_EQ(r.exitCode(), 2);
  EXPECT_FALSE(fs::exists(marker)) << "the command must not run";
  EXPECT_TRUE(contains(r.err, STRATA_TEST_NO_TAKEOVER_LIB)) << r.err;
  EXPECT_TRUE(contains(r.err, "does not take over malloc and free")) << r.err;
}

TEST(SpecCli, AFileThatIsNotALibraryOrIsMissingIsRefused) {
  TempDir tmp;
  const fs::path bad = tmp.write("libbad.so", std::string("not a library\n"));
  const Result r = strata({"run", "--allocator", bad.string(), "--", "true"});
  EXPECT_EQ(r.exitCode(), 2);
  EXPECT_TRUE(contains(r.err, bad.string() + " cannot be preloaded")) << r.err;
  const Result missing = strata({"run", "--allocator", (tmp.path() / "libnone.so").string(), "--", "true"});
  EXPECT_EQ(missing.exitCode(), 2);
  EXPECT_TRUE(contains(missing.err, "does not exist")) << missing.err;
}

// The replays and the probe preload a library into programs that are not sanitized (the
// probe) or are (the replayer): neither mixes with a sanitizer build, where these are skipped.
#define SKIP_UNDER_SANITIZERS() \
  if (!STRATA_TEST_PRELOAD) GTEST_SKIP() << "preloads libraries: not in a sanitizer build"

TEST(SpecCli, SettingsAnAllocatorRejectsAreAnError) {
  SKIP_UNDER_SANITIZERS();
  // libstrata.so names a bad value on stderr; the spec is refused with that line.
  const Result r = strata({"run", "--allocator", std::string("s=") + STRATA_TEST_STRATA_LIB +
                                                     ":STRATA_PURGE_DELAY_MS=soon", "--", "true"});
  EXPECT_EQ(r.exitCode(), 2);
  EXPECT_TRUE(contains(r.err, "rejects its settings")) << r.err;
  EXPECT_TRUE(contains(r.err, "STRATA_PURGE_DELAY_MS=soon")) << r.err;
}

TEST(SpecCli, ReplayAndCompareApplyAndLabelSpecs) {
  SKIP_UNDER_SANITIZERS();
  TempDir tmp;
  const fs::path trace = tmp.path() / "t.trace";
  ASSERT_EQ(strata({"generate", "editor", "--size", "0.02", "-o", trace.string()}).exitCode(), 0);
  const fs::path report = tmp.path() / "env";
  const std::string lib = STRATA_TEST_ENV_LIB;
  const Result r = strata({"replay", trace.string(), "--json", "--allocator",
                           "mine=" + lib + ":SPEC_REPLAY=1"},
                          {{"STRATA_TEST_ENV_REPORT", report.string()}});
  ASSERT_EQ(r.exitCode(), 0) << r.err;
  const auto j = strata::test::JsonParser(r.out).parse();
  EXPECT_EQ(j["allocator"].string, "mine");
  EXPECT_EQ(j["library"].string, lib);
  auto envs = reports(report);
  ASSERT_FALSE(envs.empty());
  EXPECT_TRUE(has(envs.back(), "SPEC_REPLAY=1"));

  fs::remove(report);
  const fs::path out = tmp.path() / "cmp";
  const Result c = strata({"compare", trace.string(), "--runs", "1", "--no-plots", "--out", out.string(),
                           "--allocators", "glibc,mine=" + lib + ":SPEC_CMP=x,y,glibc:GLIBC_TUNABLES=glibc.malloc.arena_max=1"},
                          {{"STRATA_TEST_ENV_REPORT", report.string()}});
  ASSERT_EQ(c.exitCode(), 0) << c.out << c.err;
  EXPECT_TRUE(contains(c.out, "mine")) << c.out;
  EXPECT_TRUE(contains(c.out, "glibc:GLIBC_TUNABLES=glibc.malloc.arena_max=1")) << c.out;
  const auto results = strata::test::parseJsonFile(out / "results.json");
  const auto& rows = results["traces"].array.at(0)["results"].array;
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1]["allocator"].string, "mine");
  EXPECT_EQ(rows[1]["status"].string, "ok");
  EXPECT_EQ(rows[2]["allocator"].string, "glibc:GLIBC_TUNABLES=glibc.malloc.arena_max=1");
  envs = reports(report);
  ASSERT_FALSE(envs.empty());
  EXPECT_TRUE(has(envs.back(), "SPEC_CMP=x,y")) << "the comma stays in the value";
}

TEST(SpecCli, CompareRefusesABadLibraryBeforeAnyReplay) {
  TempDir tmp;
  const fs::path out = tmp.path() / "cmp";
  const Result c = strata({"compare", "--size", "0.01", "--no-plots", "--out", out.string(),
                           "--allocators", std::string("glibc,") + STRATA_TEST_NO_TAKEOVER_LIB});
  EXPECT_EQ(c.exitCode(), 2);
  EXPECT_TRUE(contains(c.err, "does not take over malloc")) << c.err;
  EXPECT_FALSE(fs::exists(out / "results.json")) << "nothing ran";
  const Result twice = strata({"compare", "--allocators", "x=glibc,x=jemalloc", "--out", out.string()});
  EXPECT_EQ(twice.exitCode(), 2);
  EXPECT_TRUE(contains(twice.err, "two allocators are labelled 'x'")) << twice.err;
}

}  // namespace
