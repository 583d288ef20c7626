// `strata diff` as a user runs it (the built executable): the exit statuses (0, 1, 2, 3),
// the errors' wording, diff.json in the output folder, and real pairs: a Python program
// recorded twice with `strata record --sites`, and two `strata compare` folders.
#include <filesystem>
#include <string>
#include <vector>

#include "diff_fixtures.hpp"
#include "support/json_value.hpp"

namespace {

using namespace difftest;
using strata::test::runProgram;
namespace fs = std::filesystem;

const Stack kGrow{0x100, 0x200}, kKeep{0x300, 0x200};

strata::test::RunResult strata(const std::vector<std::string>& args) {
  return runProgram(STRATA_CLI_PATH, args);
}

// Two synthetic traces of one program: the site grow holds 1,000 B at A's peak, 3,000 B at B's.
struct Pair {
  TempDir dir;
  std::string a = writeTrace(dir, "a.trace", "/usr/bin/app", {kGrow, kKeep},
                             {{0, 1000, false}, {1, 500, false}});
  std::string b = writeTrace(dir, "b.trace", "/usr/bin/app", {kKeep, kGrow},
                             {{1, 3000, false}, {0, 500, false}}, 0x7f0000);
};

strata::support::JsonValue readJson(const std::string& path) {
  return strata::support::readJsonFile(path);
}

TEST(DiffCli, ThresholdSetsTheExitStatusAfterWritingEverything) {
  Pair p;
  const std::string out = p.dir / "out";
  auto r = strata({"diff", p.a, p.b, "--out", out, "--fail-if-peak-grows", "10%"});
  EXPECT_EQ(r.exitCode(), 3) << r.err;
  EXPECT_NE(r.out.find("peak live bytes grew by 133.3 %"), std::string::npos) << r.out;
  auto doc = readJson(out + "/diff.json");
  EXPECT_TRUE(doc["failed"].boolean());
  EXPECT_EQ(doc["failures"].items().size(), 2u);
  r = strata({"diff", p.a, p.b, "--out", out, "--fail-if-peak-grows", "200"});
  EXPECT_EQ(r.exitCode(), 0) << r.err;
  EXPECT_NE(r.out.find("passed"), std::string::npos) << r.out;
  EXPECT_FALSE(readJson(out + "/diff.json")["failed"].boolean());
  r = strata({"diff", p.a, p.b, "--out", out, "--json"});
  EXPECT_EQ(r.exitCode(), 0) << r.err;
  const auto printed = strata::support::parseJson(r.out);
  ASSERT_TRUE(printed) << r.out;
  EXPECT_TRUE((*printed)["threshold_percent"].isNull());
  EXPECT_EQ((*printed)["sites"].items()[0]["b"]["peak_live_bytes"].unsignedNumber(), 3000u);
}

TEST(DiffCli, WrongInvocationsExitTwo) {
  Pair p;
  EXPECT_EQ(strata({"diff", p.a}).exitCode(), 2);
  EXPECT_EQ(strata({"diff", p.a, p.b, p.a}).exitCode(), 2);
  const auto r = strata({"diff", p.a, p.b, "--fail-if-peak-grows", "lots"});
  EXPECT_EQ(r.exitCode(), 2);
  EXPECT_NE(r.err.find("invalid value 'lots' for --fail-if-peak-grows"), std::string::npos)
      << r.err;
  EXPECT_EQ(strata({"diff", p.a, p.b, "--fail-if-peak-grows", "-5%"}).exitCode(), 2);
}

TEST(DiffCli, UnreadableOrMismatchedInputsExitOne) {
  Pair p;
  const std::string perl =
      writeTrace(p.dir, "perl.trace", "/usr/bin/perl", {kGrow}, {{0, 10, false}});
  auto r = strata({"diff", p.a, perl, "--out", p.dir / "out"});
  EXPECT_EQ(r.exitCode(), 1);
  EXPECT_NE(r.err.find("A is a trace of /usr/bin/app, B of /usr/bin/perl: diff compares two runs "
                       "of one program"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(
      strata({"diff", p.a, perl, "--out", p.dir / "out", "--allow-different-programs"}).exitCode(),
      0);
  r = strata({"diff", p.a, p.dir.path().string(), "--out", p.dir / "out"});
  EXPECT_EQ(r.exitCode(), 1);
  EXPECT_NE(r.err.find("A is a trace"), std::string::npos) << r.err;
  const std::string results = resultsJson("app", "", 1, 1, 1, 1);
  const std::string a = writeFolder(p.dir, "fa", results);
  const std::string cut = writeFolder(p.dir, "fcut", results.substr(0, 40));
  r = strata({"diff", a, cut, "--out", p.dir / "out"});
  EXPECT_EQ(r.exitCode(), 1);
  EXPECT_NE(r.err.find("fcut/results.json"), std::string::npos) << r.err;
}

// A Python program recorded twice with --sites, allocating more the second time.
TEST(DiffCli, TwoRecordedRunsOfOneProgram) {
  if (!STRATA_TEST_PRELOAD) GTEST_SKIP() << "recording needs the recorder preloaded";
  if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
  TempDir dir;
  for (const auto& [name, count] : {std::pair{"a", "2000"}, std::pair{"b", "20000"}}) {
    const auto r = strata({"record", "--sites", "-o", dir / (std::string(name) + ".trace"), "--",
                           "/usr/bin/python3", "-S", "-c",
                           std::string("x = [bytes(1000) for i in range(") + count + ")]"});
    ASSERT_EQ(r.exitCode(), 0) << r.err;
  }
  const std::string out = dir / "diff";
  auto r = strata({"diff", dir / "a.trace", dir / "b.trace", "--out", out});
  ASSERT_EQ(r.exitCode(), 0) << r.err;
  EXPECT_NE(r.out.find("peak live"), std::string::npos) << r.out;
  const auto doc = readJson(out + "/diff.json");
  EXPECT_EQ(doc["a"]["kind"].string(), "trace");
  EXPECT_EQ(fs::path(doc["a"]["program"].string()).filename().string().rfind("python3", 0), 0u);
  EXPECT_GT(doc["b"]["peak_live_bytes"].unsignedNumber(),
            doc["a"]["peak_live_bytes"].unsignedNumber() + 10'000'000);
  ASSERT_FALSE(doc["sites"].items().empty());
  const auto& top = doc["sites"].items()[0];  // the bytes objects: about 18 MB more at the peak
  EXPECT_GT(top["b"]["peak_live_bytes"].unsignedNumber(),
            top["a"]["peak_live_bytes"].unsignedNumber() + 10'000'000);
  EXPECT_FALSE(top["stack"].items().empty());
  ASSERT_EQ(doc["curves"].items().size(), 2u);
  EXPECT_FALSE(doc["curves"].items()[1]["ys"].items().empty());
  r = strata(
      {"diff", dir / "a.trace", dir / "b.trace", "--out", out, "--fail-if-peak-grows", "50%"});
  EXPECT_EQ(r.exitCode(), 3) << r.out;
}

// Two compare folders of the bundled workloads, at other sizes and seeds.
TEST(DiffCli, TwoCompareFolders) {
  TempDir dir;
  for (const auto& [name, size, seed] :
       {std::tuple{"a", "0.05", "1"}, std::tuple{"b", "0.1", "7"}}) {
    const auto r = strata({"compare", "--size", size, "--seed", seed, "--runs", "1", "--no-plots",
                           "--allocators", STRATA_TEST_PRELOAD ? "glibc,strata" : "glibc", "--out",
                           dir / name});
    ASSERT_EQ(r.exitCode(), 0) << r.err;
  }
  const std::string out = dir / "diff";
  const auto r = strata({"diff", dir / "a", dir / "b", "--out", out});
  ASSERT_EQ(r.exitCode(), 0) << r.err;
  EXPECT_NE(r.out.find("allocators (A, B)"), std::string::npos) << r.out;
  const auto doc = readJson(out + "/diff.json");
  EXPECT_EQ(doc["a"]["kind"].string(), "results");
  EXPECT_GT(doc["b"]["total_bytes"].unsignedNumber(), doc["a"]["total_bytes"].unsignedNumber());
  ASSERT_FALSE(doc["allocators"].items().empty());
  EXPECT_GT(doc["allocators"].items()[0]["a"]["peak_heap_bytes"].number(), 0.0);
  ASSERT_FALSE(doc["curves"].items().empty());
  EXPECT_EQ(doc["curves"].items()[0]["x"].string(), "events");
  EXPECT_FALSE(doc["curves"].items()[0]["ys"].items().empty());
}

}  // namespace
