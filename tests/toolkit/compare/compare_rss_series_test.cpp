// `strata compare --live-only -- COMMAND` writing each allocator's RSS over its median live run
// (series/live-<allocator>.csv, named by results.json's "rss_series_file") and report.html
// last: a command that holds 100 MiB for a while then frees them is seen at about 100 MiB,
// lower at the end, and the curve agrees with the run's peak RSS.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
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

struct Row {
  double seconds;
  double rss;
};

// The rows of a "seconds,rss_bytes" file; fails the test on another header.
std::vector<Row> readSeries(const fs::path& file) {
  std::istringstream in(slurp(file));
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "seconds,rss_bytes") << file;
  std::vector<Row> rows;
  while (std::getline(in, line)) {
    Row r{};
    char comma = 0;
    std::istringstream fields(line);
    EXPECT_TRUE(fields >> r.seconds >> comma >> r.rss && comma == ',') << line;
    rows.push_back(r);
  }
  return rows;
}

TEST(CompareRssSeries, TheMedianLiveRunsRssOverTime) {
  TempDir tmp;
  const fs::path out = tmp.path() / "out";
  const strata::test::RunResult r = strata::test::runProgram(
      STRATA_CLI_PATH, {"compare", "--allocators", "glibc", "--live-only", "--runs", "3",
                        "--no-plots", "--out", out.string(), "--", STRATA_RSS_PROGRAM, "alloc",
                        "100"},
      {{"STRATA_LIB_DIR", std::nullopt}, {"STRATA_PYTHON", std::nullopt}});
  // The files are written before report.html, whatever becomes of it.
  const Json j = parseJsonFile(out / "results.json");
  const Json& row = j["command"]["live"]["results"].array.at(0);
  ASSERT_EQ(row["rss_series_file"].string, "series/live-glibc.csv") << r.out << r.err;
  const std::vector<Row> rows = readSeries(out / row["rss_series_file"].string);
  ASSERT_GT(rows.size(), 20u);  // 800 ms at 10 ms
  double peak = 0;
  for (const Row& x : rows) peak = std::max(peak, x.rss);
  const double mib = 1024.0 * 1024.0;
  EXPECT_GT(peak / mib, 80);
  EXPECT_LT(peak / mib, 120);
  EXPECT_LT(rows.back().rss, peak / 2);
  // The kernel's peak and its resident count are kept apart and may differ by a few pages.
  EXPECT_LE(peak, row["max_rss_bytes"].number * 1.02) << "the samples exceed the run's peak";
  // The samples span the run shown, up to its end.
  const double seconds = row["time_ms"].number / 1000;
  EXPECT_LE(rows.back().seconds, seconds);
  EXPECT_GT(rows.back().seconds, seconds - 0.2);

  EXPECT_EQ(r.exitCode(), 0) << r.out << r.err;
  EXPECT_NE(r.out.find("report: " + (out / "report.html").string()), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(out / "report.html"));
}

}  // namespace
