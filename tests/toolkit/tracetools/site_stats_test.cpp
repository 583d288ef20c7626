// The figures by allocation site (computeStats with a SiteStats, site_stats.hpp) on traces
// built by hand, and the ELF symbol reader (elf_symbols.hpp) on files that are not what a
// trace said they were.
#include <fstream>
#include <cstdint>
#include <string>
#include <vector>

#include "tracetools/elf_symbols.hpp"
#include "test_util.hpp"
#include "tracetools/trace_stats.hpp"

namespace {

using namespace tttest;
namespace trace = strata::trace;
namespace tt = strata::tracetools;

// A sites trace: two sites, then `events` with their sites already set.
std::string writeSitesTrace(const TempDir& dir, const std::vector<Event>& events) {
  std::vector<unsigned char> out, buf(4096), sbuf(4096);
  auto sink = [&out](const unsigned char* d, std::size_t n) {
    out.insert(out.end(), d, d + n);
    return true;
  };
  trace::TraceWriter<decltype(sink)> w(buf.data(), buf.size(), sink,
                                       trace::SiteBuffer{sbuf.data(), sbuf.size()});
  const std::uint64_t f1[] = {0x1000}, f2[] = {0x2000, 0x3000};
  EXPECT_EQ(w.defineSite(f1, 1), 1u);
  EXPECT_EQ(w.defineSite(f2, 2), 2u);
  for (const Event& e : events) EXPECT_NE(w.append(e), decltype(w)::kRejected);
  EXPECT_TRUE(w.finish());
  return dir.write("t.trace", out).string();
}

Event at(Event e, std::uint64_t site) {
  e.site = site;
  return e;
}

TEST(SiteStats, FiguresAtThePeakFollowReallocAndReaps) {
  TempDir dir;
  // id 0: site 1, 100 B; id 1: a reap (site 2, not an object); id 2: 50 B in the reap (site 2);
  // realloc 0 -> id 3 (site 2, 300 B): the peak, 350 live; reap_clear frees id 2; id 4: site
  // 1, 10 B.
  const std::string path = writeSitesTrace(
      dir, {at(ev(Op::Malloc, 100), 1), at(ev(Op::ReapCreate, 0, kNoObject, kNoObject,
                                               trace::kFlagNull), 2),
            at(ev(Op::ReapMalloc, 50, 1), 2), at(ev(Op::Realloc, 300, 0), 2),
            ev(Op::ReapClear, 0, 1), at(ev(Op::Malloc, 10), 1)});
  tt::SiteStats s;
  const tt::TraceStats st = tt::computeStats(path, &s);
  EXPECT_EQ(st.peakLiveBytes, 350u);
  ASSERT_TRUE(s.present);
  ASSERT_EQ(s.bySite.size(), 3u);
  EXPECT_EQ(s.peakEvent, 4u);
  EXPECT_EQ(s.bySite[1].allocations, 2u);
  EXPECT_EQ(s.bySite[1].bytes, 110u);
  EXPECT_EQ(s.bySite[1].peakLiveBytes, 0u);  // its 100 B were realloc'ed at the peak
  EXPECT_EQ(s.bySite[2].allocations, 2u);   // the reap itself is not an object
  EXPECT_EQ(s.bySite[2].bytes, 350u);
  EXPECT_EQ(s.bySite[2].peakLiveBytes, 350u);
  EXPECT_EQ(s.bySite[2].peakLiveObjects, 2u);
  EXPECT_EQ(s.bySite[0].allocations, 0u);
  EXPECT_EQ(s.frames[2], (std::vector<std::uint64_t>{0x2000, 0x3000}));
  EXPECT_TRUE(s.frames[0].empty());
}

TEST(SiteStats, ATraceWithoutSitesHasNone) {
  TempDir dir;
  const std::string path = dir.write("plain.trace", encode({ev(Op::Malloc, 8)})).string();
  tt::SiteStats s;
  (void)tt::computeStats(path, &s);
  EXPECT_FALSE(s.present);
  ASSERT_EQ(s.bySite.size(), 1u);
  EXPECT_EQ(s.bySite[0].bytes, 8u);  // all of it at the unknown site
}

TEST(ElfSymbols, NonElfAndCutFilesGiveNoSymbolsAndAReason) {
  TempDir dir;
  const std::string text = dir / "text";
  std::ofstream(text) << std::string(200, 'x');
  tt::ElfSymbols a(text);
  EXPECT_FALSE(a.ok());
  EXPECT_NE(a.error().find("not a 64-bit"), std::string::npos) << a.error();
  EXPECT_FALSE(tt::ElfSymbols(dir / "missing").ok());
  EXPECT_FALSE(tt::ElfSymbols(dir.path().string()).ok());  // a directory
  // The test's own executable, whole and cut at 40 places: never a crash; whole, its build
  // id is found.
  const std::string self = "/proc/self/exe";
  tt::ElfSymbols whole(self);
  ASSERT_TRUE(whole.ok()) << whole.error();
  EXPECT_FALSE(whole.buildId().empty());
  const std::string bytes = slurp(self);
  for (std::size_t n = 64; n < bytes.size(); n += bytes.size() / 40 + 1) {
    tt::ElfSymbols s(dir.write("cut", bytes.substr(0, n)).string());
    (void)s.functionAt(0x1000);
  }
}

}  // namespace
