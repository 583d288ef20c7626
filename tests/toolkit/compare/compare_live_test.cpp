// `strata compare -- COMMAND` judging every process of a command and running it live on every
// allocator: a command with a child process gives one table per process and a combined
// verdict; live runs fill every allocator's columns and results.json fields; a misbehaving
// allocator (a test library that leaves replays alone but crashes, exits non-zero or corrupts
// the output of the program itself) shows its live failure while the other rows fill; and a
// command that cannot run is an error before anything runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/process.hpp"
#include "json.hpp"

namespace {

namespace fs = std::filesystem;
using strata::test::Json;
using strata::test::parseJsonFile;
using strata::test::slurp;
using strata::test::TempDir;
using Result = strata::test::RunResult;
using Env = strata::test::EnvChanges;

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Runs `strata compare ARGS...` with STRATA_LIB_DIR and STRATA_PYTHON unset unless `env` sets them.
Result run(std::vector<std::string> args, const Env& env = {}) {
  args.insert(args.begin(), "compare");
  Env all{{"STRATA_LIB_DIR", std::nullopt}, {"STRATA_PYTHON", std::nullopt},
          {"STRATA_TEST_MISBEHAVE", std::nullopt}};
  all.insert(all.end(), env.begin(), env.end());
  return strata::test::runProgram(STRATA_CLI_PATH, args, all);
}

// The lines of the "the command as a whole" block's table: allocator -> the whole line.
[[maybe_unused]] std::map<std::string, std::string> commandRows(const std::string& out) {
  std::map<std::string, std::string> rows;
  const std::size_t start = out.find("== the command as a whole");
  if (start == std::string::npos) return rows;
  std::istringstream in(out.substr(start));
  std::string line;
  bool inTable = false;
  while (std::getline(in, line)) {
    if (contains(line, "allocator") && contains(line, "status")) {
      inTable = true;
      continue;
    }
    if (!inTable) continue;
    if (line.find_first_not_of(' ') == std::string::npos) break;
    std::istringstream words(line);
    std::string first;
    words >> first;
    rows[first] = line;
  }
  return rows;
}

TEST(CompareCommand, CommandNotFoundIsAnErrorBeforeAnythingRuns) {
  TempDir tmp;
  const fs::path out = tmp.path() / "out";
  const Result r = run({"--allocators", "glibc", "--out", out, "--", "strata-no-such-command-x"});
  EXPECT_EQ(r.exitCode(), 2) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "strata-no-such-command-x: command not found")) << r.err;
  EXPECT_FALSE(fs::exists(out)) << "nothing ran, nothing was written";
  // A file that is not executable is refused the same way.
  const fs::path plain = tmp.write("plain.txt", std::string("not a program"));
  const Result r2 = run({"--allocators", "glibc", "--out", out, "--", plain.string()});
  EXPECT_EQ(r2.exitCode(), 2) << r2.out << r2.err;
  EXPECT_TRUE(contains(r2.err, plain.string() + ": ")) << r2.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST(CompareCommand, LiveOnlyNeedsACommandAndContradictsNoLive) {
  const Result r = run({"--live-only"});
  EXPECT_EQ(r.exitCode(), 2);
  EXPECT_TRUE(contains(r.err, "--live-only needs '-- COMMAND'")) << r.err;
  const Result r2 = run({"--live-only", "--no-live", "--", "true"});
  EXPECT_EQ(r2.exitCode(), 2);
  EXPECT_TRUE(contains(r2.err, "contradict")) << r2.err;
}

TEST(CompareCommand, HeapLimitTakesATerabyteSuffix) {
  TempDir tmp;
  const Result r = run({"--allocators", "glibc", "--heap-limit", "1T", "--live-only", "--runs",
                        "1", "--no-plots", "--out", tmp / "out", "--", "true"});
  EXPECT_EQ(r.exitCode(), 0) << r.out << r.err;
  EXPECT_EQ(parseJsonFile(tmp.path() / "out" / "results.json")["heap_limit_bytes"].number,
            1099511627776.0);
  const Result bad = run({"--heap-limit", "1X", "--", "true"});
  EXPECT_EQ(bad.exitCode(), 2);
  EXPECT_TRUE(contains(bad.err, "invalid value '1X' for --heap-limit")) << bad.err;
}

// Live runs of a command whose output is known, on glibc alone (every build).
TEST(CompareCommand, LiveOnlyRunsTheCommandOnGlibc) {
  TempDir tmp;
  const fs::path out = tmp.path() / "out";
  const Result r = run({"--allocators", "glibc", "--live-only", "--runs", "2", "--no-plots",
                        "--out", out, "--", "sh", "-c", "echo hello; exit 0"});
  ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "live runs only")) << r.out;
  const Json j = parseJsonFile(out / "results.json");
  EXPECT_TRUE(j["live"].boolean);
  EXPECT_EQ(j["traces"].array.size(), 0u);
  const Json& live = j["command"]["live"];
  EXPECT_EQ(live["reference"].string, "glibc");
  ASSERT_EQ(live["results"].array.size(), 1u);
  const Json& g = live["results"].array[0];
  EXPECT_EQ(g["status"].string, "ok");
  EXPECT_EQ(g["exit"].string, "exit 0");
  EXPECT_EQ(g["wall_seconds_runs"].array.size(), 2u);
  EXPECT_GT(g["max_rss_bytes"].number, 0);
  EXPECT_EQ(slurp(out / g["stdout_file"].string), "hello\n");
}

#if STRATA_TEST_PRELOAD
TEST(CompareCommand, ChildProcessGivesATablePerProcessAndACombinedVerdict) {
  TempDir tmp;
  const fs::path out = tmp.path() / "out";
  const Result r = run({"--allocators", "glibc,strata", "--runs", "1", "--no-plots", "--no-live",
                        "--out", out, "--", STRATA_TEST_FORK_PROGRAM});
  ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
  const Json j = parseJsonFile(out / "results.json");
  ASSERT_EQ(j["traces"].array.size(), 2u) << r.out;
  // Largest first: the child allocates about 8 MiB, the first process about 2 MiB.
  const Json& first = j["traces"].array[0];
  const Json& second = j["traces"].array[1];
  EXPECT_GT(first["stats"]["total_bytes"].number, second["stats"]["total_bytes"].number);
  EXPECT_GT(second["stats"]["total_bytes"].number, 1024.0 * 1024.0);
  EXPECT_NE(first["pid"].number, 0) << "the child process is named by its pid";
  for (const Json& t : j["traces"].array) {
    EXPECT_TRUE(contains(r.out, "== " + t["name"].string)) << t["name"].string << "\n" << r.out;
    for (const Json& res : t["results"].array) EXPECT_EQ(res["status"].string, "ok");
  }
  // The combined verdict: time summed over the processes, the largest peak heap.
  const Json& combined = j["command"]["combined"];
  ASSERT_EQ(combined["allocators"].array.size(), 2u);
  for (std::size_t a = 0; a < 2; ++a) {
    const Json& c = combined["allocators"].array[a];
    const double sum = first["results"].array[a]["time_ms"].number +
                       second["results"].array[a]["time_ms"].number;
    EXPECT_NEAR(c["time_ms"].number, sum, sum * 1e-6);
    EXPECT_EQ(c["peak_heap_bytes"].number,
              std::max(first["results"].array[a]["peak_heap_bytes"].number,
                       second["results"].array[a]["peak_heap_bytes"].number));
  }
  EXPECT_FALSE(combined["fastest"].string.empty());
  EXPECT_FALSE(combined["smallest_heap"].string.empty());
  EXPECT_TRUE(contains(r.out, "replay verdict for the command: fastest")) << r.out;
  EXPECT_EQ(j["command"]["processes"].array.size(), 2u);
  EXPECT_EQ(j["command"]["live"].kind, Json::Null);

  // The same traces compared again from the file, and --process picking by program name.
  const Result again = run({(out / fs::path(STRATA_TEST_FORK_PROGRAM).filename()).string() +
                                ".trace",
                            "--allocators", "glibc", "--runs", "1", "--no-plots", "--out",
                            tmp / "again"});
  ASSERT_EQ(again.exitCode(), 0) << again.out << again.err;
  EXPECT_EQ(parseJsonFile(tmp.path() / "again" / "results.json")["traces"].array.size(), 2u);
  const Result none = run({"--allocators", "glibc", "--runs", "1", "--no-plots", "--no-live",
                           "--process", "no-such-program", "--out", tmp / "none", "--",
                           STRATA_TEST_FORK_PROGRAM});
  EXPECT_EQ(none.exitCode(), 1) << none.out << none.err;
  EXPECT_TRUE(contains(none.err, "no process matches --process")) << none.err;
}

// `sh -c 'PROGRAM; true'`: the shell allocates next to nothing, its child (PROGRAM) a lot.
TEST(CompareCommand, TrivialProcessesAreLeftOutUnlessAskedFor) {
  TempDir tmp;
  const std::vector<std::string> command = {"--", "sh", "-c",
                                            std::string(STRATA_TEST_PROGRAM) + "; true"};
  const auto compare = [&](const std::string& dir, std::vector<std::string> extra) {
    std::vector<std::string> args = {"--allocators", "glibc", "--runs", "1", "--no-plots",
                                     "--no-live", "--out", tmp / dir};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), command.begin(), command.end());
    const Result r = run(args);
    EXPECT_EQ(r.exitCode(), 0) << r.out << r.err;
    return std::make_pair(r, parseJsonFile(tmp.path() / dir / "results.json"));
  };
  const auto [byDefault, j] = compare("default", {});
  ASSERT_EQ(j["traces"].array.size(), 1u) << byDefault.out;
  EXPECT_GE(j["traces"].array[0]["stats"]["total_objects"].number, 20000) << "the program's";
  // The shell is named by the file it runs from (/bin/sh may be a link to dash).
  const std::string shell = fs::canonical("/bin/sh").filename().string() + " (pid ";
  ASSERT_EQ(j["command"]["skipped_processes"].array.size(), 1u);
  EXPECT_EQ(j["command"]["skipped_processes"].array[0].string.rfind(shell, 0), 0u)
      << j["command"]["skipped_processes"].array[0].string;
  EXPECT_TRUE(contains(byDefault.out, "not compared: " + shell)) << byDefault.out;

  const auto [all, jAll] = compare("all", {"--all-processes"});
  EXPECT_EQ(jAll["traces"].array.size(), 2u) << all.out;
  EXPECT_EQ(jAll["command"]["skipped_processes"].array.size(), 0u);

  // --process picks by program name whatever the size: the shell alone.
  const auto [picked, jPicked] = compare("picked", {"--process", "sh"});
  ASSERT_EQ(jPicked["traces"].array.size(), 1u) << picked.out;
  EXPECT_LT(jPicked["traces"].array[0]["stats"]["total_bytes"].number, 1024.0 * 1024.0);
}

TEST(CompareCommand, LiveRunsFillEveryAllocator) {
  TempDir tmp;
  const fs::path out = tmp.path() / "out";
  const Result r = run({"--allocators", "glibc,jemalloc,strata", "--runs", "2", "--no-plots",
                        "--out", out, "--", STRATA_TEST_PROGRAM});
  ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
  const auto rows = commandRows(r.out);
  ASSERT_EQ(rows.size(), 3u) << r.out;
  const Json j = parseJsonFile(out / "results.json");
  const Json& live = j["command"]["live"];
  ASSERT_EQ(live["results"].array.size(), 3u);
  for (const Json& res : live["results"].array) {
    SCOPED_TRACE(res["allocator"].string);
    EXPECT_EQ(res["status"].string, "ok") << res["detail"].string;
    EXPECT_EQ(res["exit"].string, "exit 0");
    EXPECT_TRUE(res["stdout_matches"].boolean);
    EXPECT_GT(res["time_ms"].number, 0);
    EXPECT_GT(res["cpu_ms"].number, 0);
    EXPECT_GT(res["max_rss_bytes"].number, 0);
    EXPECT_EQ(res["wall_seconds_runs"].array.size(), 2u);
    EXPECT_TRUE(contains(slurp(out / res["stdout_file"].string), "checksum"));
    EXPECT_TRUE(contains(rows.at(res["allocator"].string), "exit 0"));
  }
  const Json& agreement = j["command"]["agreement"];
  EXPECT_EQ(agreement["allocators"].number, 3);
  EXPECT_EQ(agreement["differences"].array.size(), 2u) << "every allocator but glibc";
  EXPECT_TRUE(contains(r.out, "rank correlation of peak heap with peak RSS")) << r.out;
}

TEST(CompareCommand, JsonModeKeepsTheCommandsOutputOffStdout) {
  TempDir tmp;
  const fs::path out = tmp.path() / "out";
  const Result r = run({"--allocators", "glibc", "--runs", "1", "--no-plots", "--json", "--out",
                        out, "--", STRATA_TEST_PROGRAM});
  ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
  const Json j = strata::test::JsonParser(r.out).parse();  // throws on anything else
  EXPECT_EQ(j["command"]["live"]["results"].array[0]["status"].string, "ok");
  EXPECT_FALSE(contains(r.out, "checksum"));
  const std::string name = fs::path(STRATA_TEST_PROGRAM).filename().string();
  EXPECT_TRUE(contains(slurp(out / (name + ".record.stdout")), "checksum"));
}

// A library standing in for libstrata.so that misbehaves in the program but not in replays.
void misbehaving(const std::string& mode, const std::string& expectExit,
                 const std::string& expectStdout) {
  TempDir tmp;
  const fs::path lib = tmp.path() / "lib";
  fs::create_directories(lib);
  fs::create_symlink(STRATA_TEST_MISBEHAVE_LIB, lib / "libstrata.so");
  fs::create_symlink(STRATA_TEST_RECORD_LIB, lib / "libstrata-record.so");
  const fs::path out = tmp.path() / "out";
  const Result r = run({"--allocators", "glibc,jemalloc,strata", "--runs", "1", "--no-plots",
                        "--out", out, "--", STRATA_TEST_PROGRAM},
                       {{"STRATA_LIB_DIR", lib.string()}, {"STRATA_TEST_MISBEHAVE", mode}});
  EXPECT_EQ(r.exitCode(), 1) << "a live failure fails the comparison\n" << r.out << r.err;
  const Json j = parseJsonFile(out / "results.json");
  ASSERT_EQ(j["traces"].array.size(), 1u) << r.out << r.err;
  for (const Json& res : j["traces"].array[0]["results"].array)
    EXPECT_EQ(res["status"].string, "ok") << "replays pass: " << res["allocator"].string;
  const Json& live = j["command"]["live"]["results"];
  ASSERT_EQ(live.array.size(), 3u);
  for (std::size_t a = 0; a < 2; ++a) {
    EXPECT_EQ(live.array[a]["status"].string, "ok") << live.array[a]["allocator"].string;
    EXPECT_GT(live.array[a]["max_rss_bytes"].number, 0);
  }
  const Json& bad = live.array[2];
  EXPECT_EQ(bad["allocator"].string, "strata");
  EXPECT_EQ(bad["status"].string, "failed");
  EXPECT_EQ(bad["exit"].string, expectExit);
  EXPECT_EQ(bad["stdout_matches"].boolean, expectStdout == "same");
  const auto rows = commandRows(r.out);
  ASSERT_EQ(rows.size(), 3u) << r.out;
  EXPECT_TRUE(contains(rows.at("strata"), expectExit)) << rows.at("strata");
  EXPECT_TRUE(contains(rows.at("strata"), expectStdout)) << rows.at("strata");
  EXPECT_TRUE(contains(rows.at("strata"), "live failed")) << rows.at("strata");
  EXPECT_TRUE(contains(rows.at("jemalloc"), "exit 0")) << rows.at("jemalloc");
  EXPECT_TRUE(contains(r.out, "strata live failed: ")) << r.out;
}

TEST(CompareCommand, AllocatorThatCrashesTheProgramShowsItsSignal) {
  misbehaving("crash", "signal 11 (SIGSEGV)", "DIFFERS");
}
TEST(CompareCommand, AllocatorThatMakesTheProgramExitNonZeroShowsItsStatus) {
  misbehaving("exit", "exit 3", "DIFFERS");
}
TEST(CompareCommand, AllocatorThatCorruptsTheOutputShowsIt) {
  misbehaving("output", "exit 0", "DIFFERS");
}

// 16 callocs of 8 MiB, one page of each written, all live at the peak. glibc and jemalloc take
// such blocks fresh from the kernel and leave the untouched pages alone, live and in the
// replay (which writes what the program touched, not the 128 MiB it asked for); mimalloc
// writes zeros over them, live and in the replay alike. Predicted and live differences from
// glibc agree.
TEST(CompareCommand, CallocTouchedOnOnePageReplaysAsItRanLive) {
  TempDir tmp;
  const fs::path out = tmp.path() / "out";
  const Result r = run({"--allocators", "glibc,jemalloc,mimalloc", "--runs", "1", "--no-plots",
                        "--out", out, "--", STRATA_TEST_CALLOC_PROGRAM});
  ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
  const Json j = parseJsonFile(out / "results.json");
  ASSERT_EQ(j["traces"].array.size(), 1u);
  const Json& trace = j["traces"].array[0];
  constexpr double kMiB = 1024.0 * 1024.0;
  EXPECT_GE(trace["stats"]["peak_live_bytes"].number, 128 * kMiB);
  EXPECT_LT(trace["stats"]["peak_live_bytes"].number, 128 * kMiB + 65536);
  std::map<std::string, double> replayHeap, liveRss;
  for (const Json& row : trace["results"].array) {
    ASSERT_EQ(row["status"].string, "ok") << row["allocator"].string;
    replayHeap[row["allocator"].string] =
        row["peak_heap_bytes"].number - row["startup_heap_bytes"].number;
  }
  for (const Json& l : j["command"]["live"]["results"].array) {
    EXPECT_EQ(l["status"].string, "ok") << l["allocator"].string;
    liveRss[l["allocator"].string] = l["max_rss_bytes"].number;
  }
  for (const char* fresh : {"glibc", "jemalloc"}) {
    SCOPED_TRACE(fresh);
    EXPECT_LT(replayHeap[fresh], 2 * kMiB) << "a few pages a block, not 8 MiB";
    EXPECT_LT(liveRss[fresh], 32 * kMiB);
  }
  EXPECT_GT(replayHeap["mimalloc"], 120 * kMiB) << "mimalloc writes its zeros in the replay too";
  EXPECT_GT(liveRss["mimalloc"], 120 * kMiB);
  const Json& differences = j["command"]["agreement"]["differences"];
  ASSERT_EQ(differences.array.size(), 2u);
  for (const Json& d : differences.array) {
    SCOPED_TRACE(d["allocator"].string);
    EXPECT_FALSE(d["disagrees"].boolean) << d["predicted_rss_difference_bytes"].number << " vs "
                                         << d["live_rss_difference_bytes"].number;
  }
}
#endif

}  // namespace
