// `strata stats --sites` end to end on a trace whose sites point into a real executable
// (sites_program, built with debug information): the tables' figures, the functions and
// source lines they name, the fallbacks for a missing module and an address in none.
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/flat_json.hpp"
#include "json_check.hpp"
#include "test_util.hpp"

namespace {

using namespace tttest;
using Result = strata::test::RunResult;

Result strata(const std::vector<std::string>& args) {
  return strata::test::runProgram(STRATA_CLI_PATH, args);
}

// The line of sites_program.cpp marked "site: NAME".
int markedLine(const std::string& name) {
  std::ifstream in(STRATA_SITES_SOURCE);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (line.find("// site: " + name) != std::string::npos) return n;
  return -1;
}

// The text between `from` and the next blank line (one table of the report).
std::string table(const std::string& out, const std::string& from) {
  const auto b = out.find(from);
  if (b == std::string::npos) return {};
  const auto e = out.find("\n\n", b);
  return out.substr(b, e == std::string::npos ? std::string::npos : e - b);
}

// A trace written by sites_program.
std::string sitesTrace(const TempDir& dir) {
  const std::string path = dir / "sites.trace";
  const Result r = strata::test::runProgram(STRATA_SITES_PROGRAM, {path});
  EXPECT_EQ(r.exitCode(), 0) << r.err;
  return path;
}

TEST(StatsSites, NamesTheFunctionsAndLinesOfEachSite) {
  TempDir dir;
  const std::string trace = sitesTrace(dir);
  const Result r = strata({"stats", trace, "--sites", "--out", trace + ".stats"});
  ASSERT_EQ(r.exitCode(), 0) << r.err;
  const std::string leaf = "make_leaf (sites_program.cpp:" + std::to_string(markedLine("make_leaf")) + ")";
  const std::string tree = "build_tree (sites_program.cpp:" + std::to_string(markedLine("build_tree")) + ")";
  const std::string input = "parse_input (sites_program.cpp:" + std::to_string(markedLine("parse_input")) + ")";
  // By bytes: C (3400, the gone library), A (3000), B (1500), unknown (7).
  const std::string bytes = table(r.out, "top 4 sites by bytes allocated");
  ASSERT_FALSE(bytes.empty()) << r.out;
  const auto c = bytes.find("3,400"), a = bytes.find("3,000"), b = bytes.find("1,500");
  ASSERT_NE(c, std::string::npos) << bytes;
  ASSERT_NE(a, std::string::npos) << bytes;
  ASSERT_NE(b, std::string::npos) << bytes;
  EXPECT_LT(c, a);
  EXPECT_LT(a, b);
  EXPECT_NE(bytes.find("libgone.so+0x123\n"), std::string::npos) << bytes;
  EXPECT_NE(bytes.find("<- 0x42\n"), std::string::npos) << bytes;
  EXPECT_NE(bytes.find(leaf + "\n"), std::string::npos) << bytes;
  EXPECT_NE(bytes.find("<- " + tree + "\n"), std::string::npos) << bytes;
  EXPECT_NE(bytes.find(input + "\n"), std::string::npos) << bytes;
  EXPECT_NE(bytes.find("(site unknown)"), std::string::npos) << bytes;
  // Live at the peak (3500 live: A's three objects and B's first): C and unknown are left out.
  const std::string peak = table(r.out, "top 2 sites by bytes live at the peak");
  ASSERT_FALSE(peak.empty()) << r.out;
  EXPECT_LT(peak.find(leaf), peak.find(input)) << peak;
  EXPECT_NE(peak.find("         3,000  make_leaf"), std::string::npos) << peak;
  EXPECT_NE(peak.find("           500  parse_input"), std::string::npos) << peak;
  // By allocations: B (11) first.
  const std::string count = table(r.out, "top 4 sites by allocations");
  EXPECT_LT(count.find(input), count.find(leaf)) << count;
  EXPECT_NE(count.find("          11 "), std::string::npos) << count;
  // The missing module is said once.
  const auto note = r.out.find("note: /nonexistent/libgone.so: cannot open");
  EXPECT_NE(note, std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("note: /nonexistent/libgone.so", note + 1), std::string::npos) << r.out;
}

// --sites --json: the same tables as one valid JSON object, frames symbolized field by field.
TEST(StatsSites, JsonHasTheSameTablesAndFrames) {
  TempDir dir;
  const std::string trace = sitesTrace(dir);
  const Result r = strata({"stats", trace, "--sites", "--json", "--out", trace + ".stats"});
  ASSERT_EQ(r.exitCode(), 0) << r.err;
  std::map<std::string, std::string> top;
  ASSERT_TRUE(Json(r.out).parseObject(top)) << r.out;
  EXPECT_EQ(top["total_bytes"], "7907");  // 3400 + 3000 + 1500 + 7
  EXPECT_EQ(top["peak_live_bytes"], "3500");
  std::map<std::string, std::string> sites;
  ASSERT_TRUE(Json(top["sites"]).parseObject(sites)) << top["sites"];
  const std::string tables = flatJson(sites["tables"]);
  // The three tables in order, the bytes table's sites largest first.
  const auto bytesAt = tables.find("\"order\": \"bytes\"");
  const auto peakAt = tables.find("\"order\": \"peak_live\"");
  const auto countAt = tables.find("\"order\": \"allocations\"");
  ASSERT_NE(bytesAt, std::string::npos) << tables;
  EXPECT_LT(bytesAt, peakAt);
  EXPECT_LT(peakAt, countAt);
  const std::string bytes = tables.substr(bytesAt, peakAt - bytesAt);
  const auto c = bytes.find("\"bytes\": 3400"), a = bytes.find("\"bytes\": 3000"),
             b = bytes.find("\"bytes\": 1500");
  ASSERT_NE(c, std::string::npos) << bytes;
  EXPECT_LT(c, a);
  EXPECT_LT(a, b);
  // The file as the debug information names it (the text report shows its base name).
  const std::string prefix = "\"function\": \"make_leaf\", \"file\": \"";
  const auto leaf = bytes.find(prefix);
  ASSERT_NE(leaf, std::string::npos) << bytes;
  const auto fileEnd = bytes.find('"', leaf + prefix.size());
  const std::string file = bytes.substr(leaf + prefix.size(), fileEnd - leaf - prefix.size());
  EXPECT_TRUE(file.ends_with("sites_program.cpp")) << file;
  const std::string line = "\", \"line\": " + std::to_string(markedLine("make_leaf")) + "}";
  EXPECT_EQ(bytes.substr(fileEnd, line.size()), line) << bytes;
  EXPECT_NE(bytes.find("\"module\": \"libgone.so\", \"offset\": 291"), std::string::npos)
      << bytes;  // the missing module: no names, its offset 0x123
  EXPECT_NE(bytes.find("\"site\": 0, \"bytes\": 7, \"allocations\": 1, "
                       "\"peak_live_bytes\": 0, \"frames\": []"),
            std::string::npos)
      << bytes;
  EXPECT_NE(sites["notes"].find("/nonexistent/libgone.so: cannot open"), std::string::npos)
      << sites["notes"];
}

TEST(StatsSites, TopLimitsEachTable) {
  TempDir dir;
  const Result r = strata({"stats", sitesTrace(dir), "--sites", "--top", "1", "--out", dir / "stats"});
  ASSERT_EQ(r.exitCode(), 0) << r.err;
  EXPECT_NE(r.out.find("top 1 sites by bytes allocated"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("make_leaf"), r.out.rfind("make_leaf")) << r.out;  // only as peak's top
}

TEST(StatsSites, ATraceWithoutSitesAndBadOptionsAreRefused) {
  TempDir dir;
  const std::string plain = dir / "plain.trace";
  const auto bytes = encode({ev(Op::Malloc, 8)});
  std::ofstream(plain, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                               static_cast<std::streamsize>(bytes.size()));
  Result r = strata({"stats", plain, "--sites"});
  EXPECT_EQ(r.exitCode(), 1);
  EXPECT_NE(r.err.find("carries no allocation sites"), std::string::npos) << r.err;
  r = strata({"stats", plain, "--top", "3"});
  EXPECT_EQ(r.exitCode(), 2);
  EXPECT_NE(r.err.find("--top goes with --sites"), std::string::npos) << r.err;
  r = strata({"stats", plain, "--sites", "--top", "0"});
  EXPECT_EQ(r.exitCode(), 2);
}

// `strata compare --sites`: after the trace's table, its sites live at the peak (the trace's
// figure, so shown once, not per allocator); without --sites, no such table.
TEST(CompareSites, ShowsTheSitesLiveAtThePeak) {
  TempDir dir;
  const std::string trace = sitesTrace(dir);
  const std::vector<std::string> base = {"compare", trace, "--allocators", "glibc", "--runs", "1",
                                         "--no-plots", "--out", dir / "out"};
  std::vector<std::string> args = base;
  args.push_back("--sites");
  Result r = strata(args);
  ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
  const auto head = r.out.find("by allocation site, for every allocator alike");
  ASSERT_NE(head, std::string::npos) << r.out;
  const std::string peak = table(r.out.substr(head), "top 2 sites by bytes live at the peak");
  EXPECT_NE(peak.find("3,000  make_leaf (sites_program.cpp:" +
                      std::to_string(markedLine("make_leaf")) + ")"),
            std::string::npos)
      << peak;
  EXPECT_NE(peak.find("500  parse_input (sites_program.cpp:"), std::string::npos) << peak;
  EXPECT_EQ(peak.find("libgone"), std::string::npos) << peak;  // nothing of it live at the peak
  EXPECT_NE(slurp(dir / "out/report.txt").find("make_leaf"), std::string::npos);
  r = strata(base);
  ASSERT_EQ(r.exitCode(), 0) << r.err;
  EXPECT_EQ(r.out.find("allocation site"), std::string::npos) << r.out;
}

}  // namespace
