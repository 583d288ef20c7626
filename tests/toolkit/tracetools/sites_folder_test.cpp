// `strata stats --sites --out DIR` and `strata compare --sites` end to end on a real program:
// heaptrack_program (a known sequence: three 48 B nodes from make_node, one kept; a buffer
// grown by realloc from 1000 to 3000 B; a calloc of 200 B; an aligned_alloc of 640 B) recorded
// with `strata record --sites`; the result folder's stats.json and sites.json read back.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "support/json_value.hpp"
#include "test_util.hpp"

namespace {

using namespace tttest;
using strata::support::JsonValue;
using Result = strata::test::RunResult;

Result strata(const std::vector<std::string>& args) {
  return strata::test::runProgram(STRATA_CLI_PATH, args);
}

JsonValue readJson(const std::string& path) {
  const auto v = strata::support::parseJson(slurp(path));
  EXPECT_TRUE(v.has_value()) << path << ":\n" << slurp(path);
  return v.value_or(JsonValue());
}

// heaptrack_program recorded with sites into dir/x.trace.
std::string recorded(const TempDir& dir) {
  const std::string trace = dir / "x.trace";
  const Result r = strata({"record", "--sites", "-o", trace, "--", STRATA_HEAPTRACK_PROGRAM});
  EXPECT_EQ(r.exitCode(), 0) << r.err;
  return trace;
}

// The innermost function of each listed site's stack.
std::string innermost(const JsonValue& doc, const JsonValue& site) {
  const auto& stack = site["stack"].items();
  if (stack.empty()) return {};
  return doc["frames"].items().at(stack[0].unsignedNumber())["function"].string();
}

std::uint64_t summed(const JsonValue& doc, const char* key) {
  std::uint64_t total = doc["other"][key].unsignedNumber();
  for (const JsonValue& s : doc["sites"].items()) total += s[key].unsignedNumber();
  return total;
}

TEST(StatsSitesFolder, WritesStatsSitesAndReport) {
  TempDir dir;
  const std::string trace = recorded(dir);
  const std::string out = dir / "result";
  const Result r = strata({"stats", trace, "--sites", "--out", out});
  ASSERT_EQ(r.exitCode(), 0) << r.err;
  EXPECT_TRUE(contains(r.out, "sites by bytes allocated")) << r.out;  // the tables, as before
  EXPECT_TRUE(contains(r.err, out + "/stats.json")) << r.err;
  EXPECT_TRUE(contains(r.err, out + "/sites.json")) << r.err;
  EXPECT_TRUE(contains(r.err, out + "/report.html")) << r.err;
  EXPECT_TRUE(fs::exists(out + "/report.html"));

  const JsonValue stats = readJson(out + "/stats.json");
  ASSERT_FALSE(stats.members().empty());
  EXPECT_EQ(stats.members()[0].first, "format");
  EXPECT_EQ(stats["format"].string(), "strata-stats-1");
  EXPECT_EQ(stats["trace"].string(), trace);
  EXPECT_EQ(stats["sites_file"].string(), "sites.json");
  EXPECT_EQ(stats["total_bytes"].unsignedNumber(), 3 * 48 + 1000 + 3000 + 200 + 640u);
  EXPECT_EQ(stats["never_freed"].unsignedNumber(), 1u);

  const JsonValue sites = readJson(out + "/sites.json");
  EXPECT_EQ(sites["format"].string(), "strata-sites-1");
  EXPECT_EQ(sites["trace"].string(), trace);
  EXPECT_EQ(summed(sites, "bytes"), stats["total_bytes"].unsignedNumber());
  EXPECT_EQ(summed(sites, "allocations"), stats["total_objects"].unsignedNumber());
  EXPECT_EQ(summed(sites, "peak_live_bytes"), stats["peak_live_bytes"].unsignedNumber());
  const JsonValue* node = nullptr;
  std::uint64_t temporaryBytes = 0;
  for (const JsonValue& s : sites["sites"].items()) {
    if (innermost(sites, s) == "make_node") node = &s;
    temporaryBytes += s["temporary_bytes"].unsignedNumber();
  }
  ASSERT_NE(node, nullptr) << slurp(out + "/sites.json");
  EXPECT_EQ((*node)["allocations"].unsignedNumber(), 3u);
  EXPECT_EQ((*node)["bytes"].unsignedNumber(), 144u);
  EXPECT_EQ((*node)["never_freed_objects"].unsignedNumber(), 1u);
  EXPECT_EQ((*node)["never_freed_bytes"].unsignedNumber(), 48u);
  // The 1000 B buffer, realloc'ed at once, and the 640 B block, freed after two frees but no
  // allocation: both temporary.
  EXPECT_EQ(temporaryBytes, 1000u + 640u);
  // The curve's largest point and the timeline's moment at the peak event hold the peak.
  const auto& curve = sites["curve"]["live_bytes"].items();
  std::uint64_t top = 0;
  for (const JsonValue& v : curve) top = std::max(top, v.unsignedNumber());
  EXPECT_EQ(top, sites["peak_live_bytes"].unsignedNumber());
  const auto& moments = sites["timeline"]["events"].items();
  EXPECT_TRUE(std::any_of(moments.begin(), moments.end(), [&](const JsonValue& e) {
    return e.unsignedNumber() == sites["peak_event"].unsignedNumber();
  }));
}

TEST(StatsSitesFolder, JsonKeepsItsOutputAndOutNeedsSites) {
  TempDir dir;
  const std::string trace = recorded(dir);
  const std::string out = dir / "result";
  Result r = strata({"stats", trace, "--sites", "--json", "--out", out});
  ASSERT_EQ(r.exitCode(), 0) << r.err;
  const auto printed = strata::support::parseJson(r.out);
  ASSERT_TRUE(printed.has_value()) << r.out;
  EXPECT_NE((*printed).find("sites"), nullptr);
  EXPECT_TRUE(fs::exists(out + "/sites.json"));
  r = strata({"stats", trace, "--out", out});
  EXPECT_EQ(r.exitCode(), 2);
  EXPECT_TRUE(contains(r.err, "--out goes with --sites")) << r.err;
}

// `strata compare --sites` writes <name>-sites.json and names it in results.json.
TEST(CompareSitesFolder, WritesEachTracesSitesDocument) {
  TempDir dir;
  const std::string trace = recorded(dir);
  const std::string out = dir / "out";
  const Result r = strata({"compare", trace, "--allocators", "glibc", "--runs", "1",
                           "--no-plots", "--sites", "--out", out});
  ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
  const JsonValue sites = readJson(out + "/x-sites.json");
  EXPECT_EQ(sites["format"].string(), "strata-sites-1");
  EXPECT_EQ(summed(sites, "bytes"), 3 * 48 + 1000 + 3000 + 200 + 640u);
  EXPECT_TRUE(contains(slurp(out + "/results.json"), "\"sites_file\": \"x-sites.json\""))
      << slurp(out + "/results.json");
}

}  // namespace
