// The judgement of a diff (diff_model.hpp): the sites' order, the peak's growth, the same
// program on both sides, and what passes --fail-if-peak-grows.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "diff/diff_model.hpp"
#include "support/error.hpp"

namespace strata::diff {
namespace {

std::string percentText(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", p);
  return buf;
}

std::string limitText(double p) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "more than the %g %% allowed", p);
  return buf;
}

// A's peak live bytes in the run (traces) or in the site's trace (folders).
std::uint64_t referencePeak(const DiffResult& r, const std::string& trace) {
  if (trace.empty()) return r.a.peakLiveBytes;
  for (const TraceDiff& t : r.traces)
    if (t.name == trace) return t.a.peakLiveBytes;
  return r.a.peakLiveBytes;
}

void checkPeak(DiffResult& r, const std::string& what, double a, double b, double limit) {
  const double g = growthPercent(a, b);
  if (g > limit)
    r.failures.push_back(what + " grew by " + percentText(g) + " (" + bytesText(a) + " to " +
                         bytesText(b) + "), " + limitText(limit));
}

void checkSites(DiffResult& r, double limit) {
  for (const SiteDiff& s : r.sites) {
    const std::uint64_t peak = referencePeak(r, s.trace);
    const double share =
        peak == 0 ? (s.peakLiveChange() > 0 ? 100.0 : 0.0)
                  : 100.0 * static_cast<double>(s.peakLiveChange()) / static_cast<double>(peak);
    if (share <= limit) continue;
    r.failures.push_back((s.trace.empty() ? std::string() : "trace " + s.trace + ": ") +
                         "the site " + siteText(s, 1) + " held " + changeText(s.peakLiveChange()) +
                         " at the peak, " + percentText(share) + " of A's peak live bytes, " +
                         limitText(limit));
  }
}

}  // namespace

double growthPercent(double a, double b) { return a == 0 ? 0.0 : (b - a) / a * 100.0; }

void checkSamePrograms(const std::string& programA, const std::string& programB,
                       const std::string& what, const DiffOptions& options) {
  if (programA.empty() || programB.empty() || options.allowDifferentPrograms) return;
  namespace fs = std::filesystem;
  if (fs::path(programA).filename() == fs::path(programB).filename()) return;
  throw support::Error("A is " + what + " of " + programA + ", B of " + programB +
                       ": diff compares two runs of one program "
                       "(--allow-different-programs to compare anyway)");
}

void judge(DiffResult& r) {
  std::stable_sort(r.sites.begin(), r.sites.end(), [](const SiteDiff& x, const SiteDiff& y) {
    const auto px = std::llabs(x.peakLiveChange()), py = std::llabs(y.peakLiveChange());
    if (px != py) return px > py;
    return std::llabs(x.bytesChange()) > std::llabs(y.bytesChange());
  });
  r.peakGrowthPercent =
      growthPercent(static_cast<double>(r.a.peakLiveBytes), static_cast<double>(r.b.peakLiveBytes));
  std::set<std::string> seen;  // both runs' symbolizers may say the same thing
  std::erase_if(r.notes, [&seen](const std::string& n) { return !seen.insert(n).second; });
  if (!r.thresholdPercent) return;
  const double limit = *r.thresholdPercent;
  checkPeak(r, "peak live bytes", static_cast<double>(r.a.peakLiveBytes),
            static_cast<double>(r.b.peakLiveBytes), limit);
  for (const TraceDiff& t : r.traces)  // one trace: the whole run said it already
    if (r.traces.size() > 1)
      checkPeak(r, "trace " + t.name + ": peak live bytes", static_cast<double>(t.a.peakLiveBytes),
                static_cast<double>(t.b.peakLiveBytes), limit);
  checkSites(r, limit);
  for (const AllocatorDiff& d : r.allocators)
    if (d.a.status == "ok" && d.b.status == "ok")
      checkPeak(r, "trace " + d.trace + ", allocator " + d.allocator + ": peak heap",
                d.a.peakHeapBytes, d.b.peakHeapBytes, limit);
  r.failed = !r.failures.empty();
}

}  // namespace strata::diff
