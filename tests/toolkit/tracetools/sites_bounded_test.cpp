// `strata stats --sites` and `strata export` keep memory by what is live, not by what was ever
// allocated: a trace with sites written here (the same 4,096 objects live at every length, one
// replaced at random per step, over 50 sites) and the steady workload, at two lengths ten
// times apart, must not differ in peak resident size by more than a few MiB. A record per
// object ever allocated (what the site tally and the export kept before) adds about 85 and
// 20 MiB here. Not in a sanitizer build, whose quarantine and shadow grow with what is freed.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "common/peak_memory.hpp"
#include "strata/trace/writer.hpp"

namespace {

namespace trace = strata::trace;
using strata::test::RunResult;
using strata::test::TempDir;

// A trace with sites of `objects` objects, 4,096 of them live at once, at `path`.
void writeSitesTrace(const std::string& path, std::uint64_t objects) {
  std::vector<unsigned char> out, buf(1 << 20), sbuf(1 << 12);
  auto sink = [&out](const unsigned char* d, std::size_t n) {
    out.insert(out.end(), d, d + n);
    return true;
  };
  trace::TraceWriter<decltype(sink)> w(buf.data(), buf.size(), sink,
                                       trace::SiteBuffer{sbuf.data(), sbuf.size()});
  constexpr std::uint64_t kSites = 50, kLive = 4096;
  for (std::uint64_t s = 1; s <= kSites; ++s) {
    const std::uint64_t frames[] = {0x400000 + 16 * s, 0x500000};
    w.defineSite(frames, 2);
  }
  std::mt19937_64 rng(1);
  std::vector<std::uint64_t> live;
  for (std::uint64_t i = 0; i < objects; ++i) {
    trace::Event e;
    e.timeNs = i;
    if (live.size() == kLive) {
      const std::size_t k = rng() % kLive;
      e.op = trace::Op::Free;
      e.object = live[k];
      w.append(e);
      live[k] = live.back();
      live.pop_back();
    }
    e.op = trace::Op::Malloc;
    e.size = 16 + rng() % 4096;
    e.site = 1 + rng() % kSites;
    live.push_back(w.append(e));
  }
  ASSERT_TRUE(w.finish());
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
}

// The peak resident size (KiB) of `strata ARGS...`, which must succeed.
long peakKiB(const std::vector<std::string>& args) {
  return strata::test::peakKiB(STRATA_CLI_PATH, args);
}

TEST(StatsSitesBounded, PeakMemoryDoesNotGrowWithTheNumberOfObjectsAtAFixedLiveSet) {
  TempDir dir;
  long peak[2];
  const std::uint64_t objects[2] = {200'000, 2'000'000};
  for (int i = 0; i < 2; ++i) {
    const std::string trace = dir / ("sites-" + std::to_string(i) + ".trace");
    writeSitesTrace(trace, objects[i]);
    peak[i] = peakKiB({"stats", trace, "--sites", "--out", dir / ("out-" + std::to_string(i))});
  }
  strata::test::expectBounded(peak[0], peak[1]);
}

TEST(ExportBounded, PeakMemoryDoesNotGrowWithTheNumberOfObjectsAtAFixedLiveSet) {
  TempDir dir;
  long peak[2];
  const char* sizes[2] = {"0.3", "3"};  // 150,000 and 1.5 million objects
  for (int i = 0; i < 2; ++i) {
    const std::string trace = strata::test::steadyTrace(STRATA_CLI_PATH, dir, sizes[i]);
    peak[i] = peakKiB({"export", "--to", "mtrace", trace, "-o", trace + ".mtrace"});
  }
  strata::test::expectBounded(peak[0], peak[1]);
}

}  // namespace
