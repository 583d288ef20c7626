// `strata report` as a user runs it: the built executable on a folder `strata compare` just
// wrote (a small bundled workload), the page's embedded bundle parsed back out and checked
// against the folder's files; its help, wrong invocations and a broken folder.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "common/process.hpp"
#include "support/json_value.hpp"

namespace {

namespace fs = std::filesystem;
using strata::support::JsonValue;
using strata::test::TempDir;
using Result = strata::test::RunResult;

Result strata_(const std::vector<std::string>& args) {
  return strata::test::runProgram(STRATA_CLI_PATH, args,
                                  {{"STRATA_LIB_DIR", std::nullopt}, {"STRATA_PYTHON", std::nullopt}});
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != s.npos; }

// The bundle of a page: the text of its <script type="application/json" id="strata-data">.
JsonValue bundleOf(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"strata-data\">";
  const std::size_t start = html.find(open);
  EXPECT_NE(start, std::string::npos) << "no strata-data element";
  if (start == std::string::npos) return {};
  const std::size_t from = start + open.size();
  const std::size_t end = html.find("</script", from);
  EXPECT_NE(end, std::string::npos);
  strata::support::JsonError e;
  const auto v = strata::support::parseJson(std::string_view(html).substr(from, end - from), &e);
  EXPECT_TRUE(v.has_value()) << "the bundle is not JSON: " << e.message << " at " << e.offset;
  return v ? *v : JsonValue();
}

// The largest value of column `name` of a CSV file, read directly.
std::uint64_t largestInCsv(const fs::path& path, const std::string& name) {
  const std::string text = strata::test::slurp(path);
  std::size_t pos = text.find('\n');
  const std::string header = text.substr(0, pos);
  std::size_t column = 0;
  for (std::size_t at = 0; at < header.find(name); ++at) column += header[at] == ',';
  std::uint64_t largest = 0;
  while (pos != std::string::npos && pos + 1 < text.size()) {
    const std::size_t next = text.find('\n', pos + 1);
    std::string line = text.substr(pos + 1, next - pos - 1);
    for (std::size_t c = 0; c < column; ++c) line = line.substr(line.find(',') + 1);
    largest = std::max<std::uint64_t>(largest, std::stoull(line.substr(0, line.find(','))));
    pos = next;
  }
  return largest;
}

// The largest number of an array of the bundle.
std::uint64_t largestIn(const JsonValue& values) {
  std::uint64_t largest = 0;
  for (const JsonValue& v : values.items()) largest = std::max(largest, v.unsignedNumber());
  return largest;
}

TEST(ReportCli, DrawsACompareFolderWithEveryCurveAndPeak) {
  TempDir d;
  const fs::path out = d.path() / "cmp";
  const Result cmp = strata_({"compare", "--runs", "1", "--no-plots", "--size", "0.05",
                              "--allocators", "glibc", "--out", out.string()});
  ASSERT_EQ(cmp.exitCode(), 0) << cmp.err;
  const fs::path page = d.path() / "page.html";
  const Result r = strata_({"report", out.string(), "-o", page.string()});
  ASSERT_EQ(r.exitCode(), 0) << r.err;
  EXPECT_EQ(r.out, page.string() + "\n");

  const JsonValue b = bundleOf(strata::test::slurp(page));
  EXPECT_EQ(b["schema"].string(), "strata-report-1");
  EXPECT_EQ(b["kind"].string(), "compare");
  EXPECT_EQ(b["main"]["format"].string(), "strata-compare-1");
  EXPECT_TRUE(b["title"].string().starts_with("strata compare: ")) << b["title"].string();
  std::size_t curves = 0;
  for (const JsonValue& trace : b["main"]["traces"].items()) {
    EXPECT_TRUE(b["files"].find(trace["stats_file"].string())) << trace["stats_file"].string();
    for (const JsonValue& result : trace["results"].items()) {
      const std::string name = result["series_file"].string();
      const JsonValue* file = b["files"].find(name);
      ASSERT_NE(file, nullptr) << name << " is not in the bundle";
      const auto& columns = (*file)["columns"].items();
      const auto heap = std::find_if(columns.begin(), columns.end(), [](const JsonValue& c) {
        return c.string() == "heap_bytes";
      });
      ASSERT_NE(heap, columns.end()) << name;
      const JsonValue& values = (*file)["data"].items()[static_cast<std::size_t>(heap - columns.begin())];
      EXPECT_EQ(largestIn(values), largestInCsv(out / name, "heap_bytes")) << name;
      ++curves;
    }
  }
  EXPECT_GT(curves, 0u);

  // Without -o the page goes beside the document, and naming the document works too.
  const Result again = strata_({"report", (out / "results.json").string()});
  ASSERT_EQ(again.exitCode(), 0) << again.err;
  EXPECT_EQ(again.out, (out / "report.html").string() + "\n");
  EXPECT_EQ(bundleOf(strata::test::slurp(out / "report.html"))["main"].dump(), b["main"].dump());
}

TEST(ReportCli, HelpAndWrongInvocations) {
  const Result help = strata_({"report", "--help"});
  EXPECT_EQ(help.exitCode(), 0);
  EXPECT_TRUE(help.out.starts_with("usage: strata report DIR|DOCUMENT [-o FILE]")) << help.out;
  EXPECT_TRUE(contains(help.out, "Exit status: 0; 1 ")) << help.out;
  EXPECT_TRUE(contains(help.out, "-o FILE, --out FILE")) << help.out;
  const Result none = strata_({"report"});
  EXPECT_EQ(none.exitCode(), 2);
  EXPECT_TRUE(contains(none.err, "missing the result folder")) << none.err;
  EXPECT_EQ(strata_({"report", "a", "b"}).exitCode(), 2);
  EXPECT_EQ(strata_({"report", "--bogus", "a"}).exitCode(), 2);
  EXPECT_EQ(strata_({"report", "a", "-o"}).exitCode(), 2);
}

TEST(ReportCli, ABrokenFolderExitsOneNamingTheFile) {
  TempDir d;
  d.write("results.json", std::string(R"({"format": "strata-compare-7"})"));
  const Result r = strata_({"report", d.path().string()});
  EXPECT_EQ(r.exitCode(), 1);
  EXPECT_TRUE(contains(r.err, (d.path() / "results.json").string() +
                                  ": written in format strata-compare-7; this strata reads "
                                  "strata-compare-1")) << r.err;
  EXPECT_FALSE(fs::exists(d.path() / "report.html"));
}

}  // namespace
