// heaptrack import on real recordings: data/heaptrack_program.zst is what Debian 12's heaptrack
// 1.4 wrote for heaptrack_program.c, checked event for event and site for site; the .gz holds
// the same text as heaptrack writes it without zstd. The oldest-first choice among the live
// objects of one allocation info, and file version 0's addresses, on small hand-made input.
//
// Made with (heaptrack_program.c built as in tests.cmake, in a scratch directory):
//   gcc -O0 -g -fno-builtin -fdebug-prefix-map=$PWD=. -o heaptrack_program heaptrack_program.c
//   heaptrack -o rec ./heaptrack_program && cp rec.zst data/heaptrack_program.zst
//   zstd -dc rec.zst | gzip -9 -n > data/heaptrack_program.gz
#include <set>
#include <sstream>

#include "tracetools/heaptrack.hpp"
#include "test_util.hpp"

namespace {

using namespace tttest;
namespace tt = strata::tracetools;
using strata::trace::MemorySource;
using strata::trace::ReadStatus;
using strata::trace::TraceReader;

const std::string kData = STRATA_HEAPTRACK_DATA;

// A trace's events and the frames of its sites (sites[id - 1], innermost first).
struct Imported {
  std::vector<Event> events;
  std::vector<std::vector<std::uint64_t>> sites;
};

Imported readImported(const std::string& path) {
  const std::string bytes = slurp(path);
  TraceReader<MemorySource> r(
      MemorySource{reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()});
  Imported out;
  Event e;
  while (r.next(e) == ReadStatus::Event) out.events.push_back(e);
  EXPECT_TRUE(r.complete()) << r.error().message();
  EXPECT_TRUE(r.hasSites());
  for (std::uint64_t id = 1; id <= r.sites().siteCount(); ++id) {
    const auto f = r.sites().frames(id);
    out.sites.emplace_back(f.begin(), f.end());
  }
  return out;
}

// The instruction pointers heaptrack's 'i' lines name in the checked-in recording (return
// addresses - 1: a site's frames are these + 1).
constexpr std::uint64_t kMakeNode = 0x560362d8f190;      // make_node's call of malloc
constexpr std::uint64_t kResizeBuffer = 0x560362d8f1b5;  // resize_buffer's call of realloc
constexpr std::uint64_t kMainNodes = 0x560362d8f1d2;     // main's calls, line by line
constexpr std::uint64_t kMainGrow1 = 0x560362d8f1f6;
constexpr std::uint64_t kMainGrow2 = 0x560362d8f20b;
constexpr std::uint64_t kMainCalloc = 0x560362d8f21e;
constexpr std::uint64_t kMainAligned = 0x560362d8f231;

TEST(Heaptrack, ImportsARealRecordingEventForEvent) {
  TempDir dir;
  const tt::HeaptrackImportResult r =
      tt::importHeaptrack(kData + "/heaptrack_program.zst", dir / "out.trace");
  EXPECT_EQ(r.fileVersion, 3u);
  EXPECT_EQ(r.lines, 81u);
  EXPECT_EQ(r.objects, 8u);
  EXPECT_EQ(r.events, 15u);
  EXPECT_EQ(r.sites, 6u);
  EXPECT_EQ(r.unknownFrees, 0u);
  EXPECT_EQ(r.ambiguousFrees, 2u);  // both frees of a 48-byte node had several to choose from
  EXPECT_FALSE(r.attached);

  // {op, size or freed object, site}. Object 0 is the C++ runtime's emergency pool, allocated
  // as heaptrack's preloaded library loads libstdc++ and freed at exit.
  struct Want {
    Op op;
    std::uint64_t sizeOrObject, site;
  };
  const Want want[] = {
      {Op::Malloc, 72704, 1},
      {Op::Malloc, 48, 2}, {Op::Malloc, 48, 2}, {Op::Malloc, 48, 2},  // nodes[0..2]: objects 1-3
      {Op::Malloc, 1000, 3},                  // resize_buffer(NULL, 1000): object 4
      {Op::Free, 4, 0}, {Op::Malloc, 3000, 4},  // realloc to 3000: a free, then object 5
      {Op::Malloc, 200, 5},                   // calloc(10, 20): object 6
      {Op::Malloc, 640, 6},                   // aligned_alloc(64, 640): object 7
      {Op::Free, 1, 0},  // free(nodes[1]): heaptrack names the info, the oldest node goes
      {Op::Free, 6, 0}, {Op::Free, 7, 0}, {Op::Free, 5, 0},
      {Op::Free, 2, 0},  // free(nodes[0])
      {Op::Free, 0, 0}};
  const Imported got = readImported(dir / "out.trace");
  ASSERT_EQ(got.events.size(), std::size(want));
  std::set<std::uint64_t> live;
  for (std::size_t i = 0, id = 0; i < got.events.size(); ++i) {
    const Event& e = got.events[i];
    EXPECT_EQ(e.op, want[i].op) << "event " << i;
    EXPECT_EQ(e.thread, 0u) << "event " << i;
    EXPECT_EQ(e.timeNs, 0u) << "event " << i;  // all before heaptrack's first 'c' line
    if (e.op == Op::Malloc) {
      EXPECT_EQ(e.size, want[i].sizeOrObject) << "event " << i;
      EXPECT_EQ(e.site, want[i].site) << "event " << i;
      live.insert(id++);
    } else {
      EXPECT_EQ(e.object, want[i].sizeOrObject) << "event " << i;
      EXPECT_EQ(live.erase(e.object), 1u) << "event " << i << " frees a dead object";
    }
  }
  EXPECT_EQ(live, std::set<std::uint64_t>{3});  // one 48-byte node, as nodes[2] in the program

  // Each site is heaptrack's call stack, innermost first, down to _start: the allocating
  // function, the line of main that called it, then libc's start code and _start; its frames
  // are return addresses, as a recorded trace's.
  ASSERT_EQ(got.sites.size(), 6u);
  const std::uint64_t firsts[][2] = {{kMakeNode, kMainNodes},   {kResizeBuffer, kMainGrow1},
                                     {kResizeBuffer, kMainGrow2}, {kMainCalloc, 0},
                                     {kMainAligned, 0}};
  for (std::size_t s = 1; s < 6; ++s) {
    const std::vector<std::uint64_t>& f = got.sites[s];
    const std::size_t own = firsts[s - 1][1] != 0 ? 2 : 1;  // frames above main's callers
    ASSERT_EQ(f.size(), own + 3) << "site " << s + 1;
    EXPECT_EQ(f[0], firsts[s - 1][0] + 1) << "site " << s + 1;
    if (own == 2) {
      EXPECT_EQ(f[1], firsts[s - 1][1] + 1) << "site " << s + 1;
    }
    EXPECT_EQ(f.back(), 0x560362d8f0b1u) << "site " << s + 1;  // _start's 'i' + 1
  }
  EXPECT_EQ(got.sites[0].size(), 4u);  // libstdc++'s initialiser, called by ld.so
}

TEST(Heaptrack, GzipAndZstdRecordingsGiveTheSameTrace) {
  TempDir dir;
  tt::importHeaptrack(kData + "/heaptrack_program.zst", dir / "zst.trace");
  tt::importHeaptrack(kData + "/heaptrack_program.gz", dir / "gz.trace");
  const std::string zst = slurp(dir / "zst.trace");
  EXPECT_GT(zst.size(), 100u);
  EXPECT_EQ(slurp(dir / "gz.trace"), zst);
}

// Imports `text` (plain); the events it gave.
std::vector<Event> importText(const std::string& text, tt::HeaptrackImportResult* result) {
  TempDir dir;
  std::istringstream in(text);
  *result = tt::importHeaptrack(in, "in.ht", dir / "out.trace");
  return readEvents(dir / "out.trace");
}

const std::string kHeader = "v 10400 3\nX ./prog\ns 4 main\ni 1000 0 1\nt 1 0\na 10 1\na 20 1\n";

TEST(Heaptrack, FreesTheOldestLiveObjectOfAnAllocationInfo) {
  tt::HeaptrackImportResult r;
  const std::vector<Event> got = importText(kHeader + "+ 0\n+ 0\n+ 1\nc a\n- 0\n- 1\n- 0\n- 0\n", &r);
  ASSERT_EQ(got.size(), 6u);
  EXPECT_EQ(got[0].size, 0x10u);
  EXPECT_EQ(got[2].size, 0x20u);
  EXPECT_EQ(got[3].object, 0u);  // the first of the two 16-byte objects
  EXPECT_EQ(got[4].object, 2u);
  EXPECT_EQ(got[5].object, 1u);
  EXPECT_EQ(got[2].timeNs, 0u);
  EXPECT_EQ(got[3].timeNs, 10'000'000u);  // 'c a': 10 ms
  EXPECT_EQ(r.unknownFrees, 1u);          // the last '- 0' had nothing live
  EXPECT_EQ(r.ambiguousFrees, 1u);
}

TEST(Heaptrack, FileVersionZeroFreesByAddress) {
  tt::HeaptrackImportResult r;
  const std::vector<Event> got =
      importText("s main\ni 1000 0 1\nt 1 0\n+ 10 1 aa0\n+ 10 1 bb0\n- bb0\n- cc0\n", &r);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[2].object, 1u);  // bb0, the second, although both are 16 bytes from one trace
  EXPECT_EQ(r.unknownFrees, 1u);
  EXPECT_EQ(r.ambiguousFrees, 0u);
}

TEST(Heaptrack, ReadsHeaptrack12sVersionLineAsFileVersion1) {
  tt::HeaptrackImportResult r;
  const std::vector<Event> got = importText("v 10200\ns main\ni 1000 0 1\nt 1 0\na 8 1\n+ 0\n- 0\n", &r);
  EXPECT_EQ(r.fileVersion, 1u);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].object, 0u);
}

TEST(Heaptrack, SkipsSuppressionsCommandLinesCommentsAndRss) {
  tt::HeaptrackImportResult r;
  const std::vector<Event> got = importText(
      "v 10400 3\nX ./prog with args\nS leak:libfoo.so\nI 1000 5e27ec\n# a comment\n\nR 3a6\n"
      "A\ns 4 main\ni 1000 0 1\nt 1 0\na 8 1\n+ 0\n",
      &r);
  EXPECT_TRUE(r.attached);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].size, 8u);
}

}  // namespace
