// `strata record --sites` end to end: sites_program (built with frame pointers, without,
// and without unwind tables; see tests.cmake) is recorded with sites, and the trace is read
// back: the bytes `strata stats --sites` attributes to the functions that allocated them, by
// name and line; threads; a library loaded and unloaded during the run; a fork child's own
// trace; a stack the walk cannot go past; and no sites without --sites.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/process.hpp"
#include "strata/trace/reader.hpp"

namespace {

using strata::test::RunResult;
using strata::test::runProgram;
using strata::test::slurp;
using strata::test::TempDir;
using strata::trace::Event;
using strata::trace::kNoSite;
using strata::trace::Op;

RunResult strata(const std::vector<std::string>& args) {
  return runProgram(STRATA_CLI_PATH, args);
}

// A trace read whole: its events (with their sites), its sites and modules, whether it has
// sites and its trailer.
struct Trace {
  std::vector<Event> events;
  strata::trace::SiteTable<> sites;
  bool hasSites = false, complete = false;
  std::string error;
};

Trace readTrace(const std::string& path) {
  Trace t;
  const std::string bytes = slurp(path);
  strata::trace::TraceReader<strata::trace::MemorySource> r(strata::trace::MemorySource{
      reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()});
  Event e;
  strata::trace::ReadStatus s;
  while ((s = r.next(e)) == strata::trace::ReadStatus::Event) t.events.push_back(e);
  if (s == strata::trace::ReadStatus::Error) t.error = r.error().message();
  t.sites = r.sites();
  t.hasSites = r.hasSites();
  t.complete = r.complete();
  return t;
}

// The line of `file` marked "site: NAME".
int markedLine(const std::string& file, const std::string& name) {
  std::ifstream in(file);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (line.find("/* site: " + name + " */") != std::string::npos) return n;
  return -1;
}

// "a (sites_program.c:21)": how the report names the marked line of function `name`.
std::string frameName(const std::string& name, const std::string& file = RECORD_SITES_SOURCE) {
  return name + " (" + std::filesystem::path(file).filename().string() + ":" +
         std::to_string(markedLine(file, name)) + ")";
}

// One row of a `strata stats --sites` table: its bytes and its frames as the report names
// them, innermost first.
struct Row {
  std::uint64_t bytes = 0;
  std::vector<std::string> frames;
};

// The rows of the report's first table (top sites by bytes allocated).
std::vector<Row> bytesTable(const std::string& out) {
  std::vector<Row> rows;
  const std::size_t from = out.find("by bytes allocated");
  if (from == std::string::npos) return rows;
  std::istringstream in(out.substr(from, out.find("\n\n", from) - from));
  std::string line;
  constexpr std::size_t kFrameColumn = 2 + 16 + 1 + 12 + 1 + 16 + 2;
  while (std::getline(in, line)) {
    if (line.size() <= kFrameColumn) continue;
    const std::string frame = line.substr(kFrameColumn);
    if (frame.rfind("<- ", 0) == 0 && !rows.empty()) {
      rows.back().frames.push_back(frame.substr(3));
      continue;
    }
    std::string figure = line.substr(0, 2 + 16);
    std::string digits;
    for (char ch : figure)
      if (ch >= '0' && ch <= '9') digits += ch;
    if (digits.empty()) continue;
    rows.push_back(Row{std::stoull(digits), {frame}});
  }
  return rows;
}

// The row whose innermost frame is `frame`, or nullptr.
const Row* rowOf(const std::vector<Row>& rows, const std::string& frame) {
  for (const Row& r : rows)
    if (!r.frames.empty() && r.frames[0] == frame) return &r;
  return nullptr;
}

// The sites of the creating events of `size` bytes, and how many such events there are.
std::multiset<std::uint64_t> sitesOfSize(const Trace& t, std::uint64_t size) {
  std::multiset<std::uint64_t> s;
  for (const Event& e : t.events)
    if (strata::trace::opCreates(e.op) && e.size == size) s.insert(e.site);
  return s;
}

// Records `program args` with --sites into dir/x.trace; expects success.
std::string recordWithSites(const TempDir& dir, const std::string& program,
                            const std::vector<std::string>& args) {
  const std::string trace = dir / "x.trace";
  std::vector<std::string> cmd = {"record", "--sites", "-o", trace, "--", program};
  cmd.insert(cmd.end(), args.begin(), args.end());
  const RunResult r = strata(cmd);
  EXPECT_EQ(r.exitCode(), 0) << r.err;
  EXPECT_NE(r.err.find(" sites, "), std::string::npos) << r.err;  // the summary counts them
  return trace;
}

// The report of `strata stats --sites` on trace; expects success.
std::string siteReport(const std::string& trace) {
  const RunResult r = strata({"stats", trace, "--sites", "--top", "20", "--out", trace + ".stats"});
  EXPECT_EQ(r.exitCode(), 0) << r.err;
  return r.out;
}

class RecordSites : public testing::TestWithParam<const char*> {};

// With and without frame pointers alike: a's and b's bytes go to a and b, each one site,
// called from main; the realloc's site is c.
TEST_P(RecordSites, AttributesTheBytesToTheFunctionsThatAllocated) {
  TempDir dir;
  const std::string trace = recordWithSites(dir, GetParam(), {"serial"});
  const Trace t = readTrace(trace);
  ASSERT_TRUE(t.error.empty()) << t.error;
  EXPECT_TRUE(t.complete);
  ASSERT_TRUE(t.hasSites);
  const auto aSites = sitesOfSize(t, 1000), bSites = sitesOfSize(t, 3000);
  ASSERT_EQ(aSites.size(), 10u);
  ASSERT_EQ(bSites.size(), 20u);
  EXPECT_EQ(aSites.count(*aSites.begin()), 10u);  // one stack, interned to one site
  EXPECT_EQ(bSites.count(*bSites.begin()), 20u);
  EXPECT_NE(*aSites.begin(), kNoSite);
  EXPECT_NE(*aSites.begin(), *bSites.begin());
  // The program is among the modules, with its build id.
  bool found = false;
  for (std::size_t i = 0; i < t.sites.moduleCount(); ++i) {
    const auto m = t.sites.module(i);
    if (std::string(m.path, m.pathLength) != std::filesystem::canonical(GetParam())) continue;
    found = true;
    EXPECT_GT(m.buildIdLength, 0u);
  }
  EXPECT_TRUE(found);

  const std::string out = siteReport(trace);
  const std::vector<Row> rows = bytesTable(out);
  const Row* ra = rowOf(rows, frameName("a"));
  const Row* rb = rowOf(rows, frameName("b"));
  ASSERT_NE(ra, nullptr) << out;
  ASSERT_NE(rb, nullptr) << out;
  EXPECT_EQ(ra->bytes, 10'000u);
  EXPECT_EQ(rb->bytes, 60'000u);
  ASSERT_GE(ra->frames.size(), 2u) << out;
  EXPECT_EQ(ra->frames[1].rfind("main (sites_program.c:", 0), 0u) << out;
  const Row* rc = rowOf(rows, frameName("c"));
  ASSERT_NE(rc, nullptr) << out;
  EXPECT_EQ(rc->bytes, 5000u + 10000u + 15000u + 20000u);
}

// Four threads run a() and b(): the same stacks on every thread are the same two sites.
TEST_P(RecordSites, ThreadsShareTheSiteOfOneStack) {
  TempDir dir;
  const std::string trace = recordWithSites(dir, GetParam(), {"threads"});
  const Trace t = readTrace(trace);
  ASSERT_TRUE(t.error.empty()) << t.error;
  std::set<std::uint32_t> threads;
  for (const Event& e : t.events)
    if (e.size == 1000 && strata::trace::opCreates(e.op)) threads.insert(e.thread);
  EXPECT_EQ(threads.size(), 4u);
  const auto aSites = sitesOfSize(t, 1000);
  ASSERT_EQ(aSites.size(), 40u);
  EXPECT_EQ(aSites.count(*aSites.begin()), 40u);
  const std::vector<Row> rows = bytesTable(siteReport(trace));
  const Row* ra = rowOf(rows, frameName("a"));
  const Row* rb = rowOf(rows, frameName("b"));
  ASSERT_NE(ra, nullptr);
  ASSERT_NE(rb, nullptr);
  EXPECT_EQ(ra->bytes, 40'000u);
  EXPECT_EQ(rb->bytes, 240'000u);
  ASSERT_GE(ra->frames.size(), 2u);
  EXPECT_EQ(ra->frames[1].rfind("worker (sites_program.c:", 0), 0u);
}

INSTANTIATE_TEST_SUITE_P(Builds, RecordSites,
                         testing::Values(RECORD_SITES_FP, RECORD_SITES_NOFP),
                         [](const testing::TestParamInfo<const char*>& info) {
                           return std::string(info.index == 0 ? "FramePointers"
                                                              : "NoFramePointers");
                         });

// Without unwind tables (and frame pointers) the walk cannot go past a() or b(): every event
// is still recorded, each with the one frame that could be found, the allocating call.
TEST(RecordSitesUnwalkable, EveryEventIsRecordedWithTheFramesThatCouldBeFound) {
  TempDir dir;
  const std::string trace = recordWithSites(dir, RECORD_SITES_NOUNWIND, {"serial"});
  const Trace t = readTrace(trace);
  ASSERT_TRUE(t.error.empty()) << t.error;
  EXPECT_TRUE(t.complete);
  std::size_t frees = 0;
  for (const Event& e : t.events) frees += e.op == Op::Free;
  EXPECT_GE(frees, 31u);  // a's 10, b's 20, c's 1: none lost
  const auto aSites = sitesOfSize(t, 1000), bSites = sitesOfSize(t, 3000);
  ASSERT_EQ(aSites.size(), 10u);
  ASSERT_EQ(bSites.size(), 20u);
  EXPECT_EQ(aSites.count(*aSites.begin()), 10u);
  for (std::uint64_t s : {*aSites.begin(), *bSites.begin()}) {
    ASSERT_NE(s, kNoSite);
    EXPECT_EQ(t.sites.frames(s).size(), 1u);  // the call in a() or b(), and no further
  }
  const std::vector<Row> rows = bytesTable(siteReport(trace));
  const Row* ra = rowOf(rows, frameName("a"));
  ASSERT_NE(ra, nullptr);
  EXPECT_EQ(ra->bytes, 10'000u);
  EXPECT_EQ(ra->frames.size(), 1u);
}

// A library loaded with dlopen, called and unloaded before the end: its module is in the
// trace and its function named.
TEST(RecordSitesModules, ALibraryUnloadedBeforeTheEndIsNamed) {
  TempDir dir;
  const std::string trace =
      recordWithSites(dir, RECORD_SITES_NOFP, {"plugin", RECORD_SITES_PLUGIN});
  const Trace t = readTrace(trace);
  ASSERT_TRUE(t.error.empty()) << t.error;
  bool found = false;
  for (std::size_t i = 0; i < t.sites.moduleCount(); ++i) {
    const auto m = t.sites.module(i);
    found |= std::string(m.path, m.pathLength) == std::filesystem::canonical(RECORD_SITES_PLUGIN);
  }
  EXPECT_TRUE(found);
  const std::string out = siteReport(trace);
  const std::vector<Row> rows = bytesTable(out);
  const Row* r = rowOf(rows, frameName("plugin_alloc", RECORD_SITES_PLUGIN_SOURCE));
  ASSERT_NE(r, nullptr) << out;
  EXPECT_EQ(r->bytes, 5u * 777u);
}

// A fork child writes a trace of its own with sites and modules: the objects it inherited are
// re-created with no site (their stacks were the parent's), its own allocations have theirs.
TEST(RecordSitesFork, TheChildsTraceHasItsOwnSites) {
  TempDir dir;
  const std::string trace = recordWithSites(dir, RECORD_SITES_NOFP, {"fork"});
  std::string childTrace;
  for (const auto& f : std::filesystem::directory_iterator(dir.path()))
    if (f.path().filename().string().rfind("x.trace.", 0) == 0) childTrace = f.path();
  ASSERT_FALSE(childTrace.empty());
  const Trace parent = readTrace(trace), child = readTrace(childTrace);
  ASSERT_TRUE(parent.error.empty() && child.error.empty()) << parent.error << child.error;
  ASSERT_TRUE(child.hasSites);
  EXPECT_GT(child.sites.moduleCount(), 0u);
  const auto inherited = sitesOfSize(child, 1000);
  ASSERT_EQ(inherited.size(), 10u);
  EXPECT_EQ(inherited.count(kNoSite), 10u);
  const auto own = sitesOfSize(child, 3000);
  ASSERT_EQ(own.size(), 20u);
  EXPECT_EQ(own.count(kNoSite), 0u);
  EXPECT_EQ(sitesOfSize(parent, 1000).count(kNoSite), 0u);
  const std::vector<Row> rows = bytesTable(siteReport(childTrace));
  const Row* rb = rowOf(rows, frameName("b"));
  ASSERT_NE(rb, nullptr);
  EXPECT_EQ(rb->bytes, 60'000u);
}

#ifdef RECORD_SEQUENCE
// Every creating call has a site: malloc, calloc, realloc (moving and not), the aligned
// calls, new, and the reap, region and obstack calls (reap_create, reap_malloc, reap_calloc,
// reap_realloc, region_alloc, obstack_init, obstack_alloc, obstack_finish, ...), each at its
// own line of sequence_program.cpp.
TEST(RecordSitesEntryPoints, EveryCreatingCallHasASite) {
  TempDir dir;
  const Trace t = readTrace(recordWithSites(dir, RECORD_SEQUENCE, {}));
  ASSERT_TRUE(t.error.empty()) << t.error;
  std::size_t creates = 0, reapCreates = 0, reapMallocs = 0;
  std::set<std::uint64_t> sites;
  for (const Event& e : t.events) {
    if (!strata::trace::opCreates(e.op)) continue;
    ++creates;
    reapCreates += e.op == Op::ReapCreate;
    reapMallocs += e.op == Op::ReapMalloc;
    EXPECT_NE(e.site, kNoSite) << "event of op " << static_cast<int>(e.op) << ", size " << e.size;
    sites.insert(e.site);
  }
  EXPECT_GE(creates, 20u);
  EXPECT_EQ(reapCreates, 5u);  // R, C, P (reapCreate), the region and the obstack
  EXPECT_GE(reapMallocs, 6u);
  EXPECT_GE(sites.size(), creates / 2);  // calls on different lines: different sites
}
#endif

// `strata compare --sites -- COMMAND` records the command with its sites and shows them.
TEST(RecordSitesCompare, CompareRecordsTheCommandWithItsSites) {
  TempDir dir;
  const RunResult r = strata({"compare", "--allocators", "glibc", "--runs", "1", "--no-plots",
                              "--no-live", "--sites", "--out", dir / "out", "--",
                              RECORD_SITES_NOFP, "serial"});
  ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
  EXPECT_NE(r.out.find("by allocation site"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(frameName("c")), std::string::npos) << r.out;  // live at the peak
  const Trace t = readTrace(dir / "out/record_sites_nofp_program.trace");
  ASSERT_TRUE(t.error.empty()) << t.error;
  EXPECT_TRUE(t.hasSites);
}

// Without --sites: no SITES flag, and `strata stats --sites` says so.
TEST(RecordSitesOff, WithoutSitesTheTraceHasNone) {
  TempDir dir;
  const std::string trace = dir / "x.trace";
  RunResult r = strata({"record", "-o", trace, "--", RECORD_SITES_NOFP, "serial"});
  ASSERT_EQ(r.exitCode(), 0) << r.err;
  EXPECT_EQ(r.err.find(" sites, "), std::string::npos) << r.err;
  const Trace t = readTrace(trace);
  ASSERT_TRUE(t.error.empty()) << t.error;
  EXPECT_FALSE(t.hasSites);
  EXPECT_EQ(t.sites.siteCount(), 0u);
  EXPECT_EQ(sitesOfSize(t, 1000).size(), 10u);
  r = strata({"stats", trace, "--sites"});
  EXPECT_EQ(r.exitCode(), 1);
  EXPECT_NE(r.err.find("carries no allocation sites"), std::string::npos) << r.err;
}

}  // namespace
