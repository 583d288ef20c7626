// The verdict over a command's processes, and how far the replay's verdict agrees with the
// live runs' (compare_steps.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "support/format.hpp"
#include "compare/compare_steps.hpp"

namespace strata::compare {
namespace {

// Rank correlations below this, or a predicted difference off by more than the larger of
// kRelativeSlack of the live difference and kAbsoluteSlack, are called disagreements.
constexpr double kRankAgreement = 0.9;
constexpr double kRelativeSlack = 0.10;
constexpr double kAbsoluteSlack = 2.0 * 1024 * 1024;

// 1-based ranks of `v`, ties given their average rank.
std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> order(v.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double average = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (std::size_t k = i; k <= j; ++k) r[order[k]] = average;
    i = j + 1;
  }
  return r;
}

std::string mibText(double bytes) { return support::mib(bytes, "%+.1f") + " MiB"; }

std::string twoDecimals(double v) { return support::format("%.2f", v); }

}  // namespace

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 3) return NAN;
  const std::vector<double> rx = ranks(x), ry = ranks(y);
  const double n = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < rx.size(); ++i) {
    mx += rx[i] / n;
    my += ry[i] / n;
  }
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < rx.size(); ++i) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  if (sxx == 0 || syy == 0) return NAN;
  return sxy / std::sqrt(sxx * syy);
}

void combineProcesses(const std::vector<TraceReport>& traces, CommandReport& command) {
  command.combined.clear();
  if (traces.empty()) return;
  const std::size_t n = traces.front().rows.size();
  const CombinedRow* fastest = nullptr;
  const CombinedRow* smallest = nullptr;
  for (std::size_t a = 0; a < n; ++a) {
    CombinedRow c;
    c.allocator = traces.front().rows[a].allocator;
    c.finished = true;
    for (const TraceReport& t : traces) {
      const AllocatorRow& r = t.rows[a];
      if (!replayOk(r.median)) c.finished = false;
      c.seconds += replayTime(r.median);
      if (r.median.peakHeapBytes >= c.peakHeapBytes) {
        c.peakHeapBytes = r.median.peakHeapBytes;
        c.libraryBytes = r.median.libraryResidentBytes;
      }
    }
    command.combined.push_back(c);
  }
  for (const CombinedRow& c : command.combined) {
    if (!c.finished) continue;
    if (fastest == nullptr || c.seconds < fastest->seconds) fastest = &c;
    if (smallest == nullptr || c.peakHeapBytes < smallest->peakHeapBytes) smallest = &c;
  }
  command.fastest = fastest != nullptr ? fastest->allocator : "";
  command.smallest = smallest != nullptr ? smallest->allocator : "";
}

void computeAgreement(CommandReport& command) {
  Agreement& a = command.agreement;
  a = Agreement{};
  if (!command.haveLive || command.combined.empty()) return;
  a.computed = true;
  std::vector<double> heap, rss, replayTimes, liveTimes;
  const CombinedRow* refReplay = nullptr;
  const LiveRow* refLive = nullptr;
  std::vector<std::pair<const CombinedRow*, const LiveRow*>> both;
  for (std::size_t i = 0; i < command.combined.size() && i < command.live.rows.size(); ++i) {
    const CombinedRow& c = command.combined[i];
    const LiveRow& l = command.live.rows[i];
    if (!c.finished || !l.ok()) continue;
    both.emplace_back(&c, &l);
    heap.push_back(static_cast<double>(c.predictedRssBytes()));
    rss.push_back(static_cast<double>(l.maxRssBytes));
    replayTimes.push_back(c.seconds);
    liveTimes.push_back(l.wallSeconds);
    if (l.allocator == command.live.reference) {
      refReplay = &c;
      refLive = &l;
    }
  }
  a.allocators = both.size();
  a.heapRankCorrelation = spearman(heap, rss);
  a.timeRankCorrelation = spearman(replayTimes, liveTimes);
  if (both.size() < 3)
    a.notes.push_back("Too few allocators ran both ways (" + std::to_string(both.size()) +
                      ") for a rank correlation; it needs three.");
  if (std::isfinite(a.heapRankCorrelation) && a.heapRankCorrelation < kRankAgreement)
    a.notes.push_back("The replay ranks the allocators' memory differently from the live runs "
                      "(rank correlation " + twoDecimals(a.heapRankCorrelation) +
                      "): the replay measures the heap of the recorded allocations, the live "
                      "peak RSS also counts the program's code, stacks and memory not from malloc.");
  if (std::isfinite(a.timeRankCorrelation) && a.timeRankCorrelation < kRankAgreement)
    a.notes.push_back("The replay ranks the allocators' speed differently from the live runs "
                      "(rank correlation " + twoDecimals(a.timeRankCorrelation) +
                      "): the live time includes everything the program does besides allocating.");
  if (refReplay == nullptr) return;
  for (const auto& [c, l] : both) {
    if (c == refReplay) continue;
    Agreement::Difference d;
    d.allocator = c->allocator;
    // The predicted RSS (heap and the allocator library's own pages) against the reference.
    d.predictedHeapBytes = static_cast<double>(c->predictedRssBytes()) -
                           static_cast<double>(refReplay->predictedRssBytes());
    d.liveRssBytes = static_cast<double>(l->maxRssBytes) - static_cast<double>(refLive->maxRssBytes);
    // Within 10 % of the live difference, or 2 MiB, whichever is larger.
    const double slack = std::max(kRelativeSlack * std::fabs(d.liveRssBytes), kAbsoluteSlack);
    d.disagrees = std::fabs(d.predictedHeapBytes - d.liveRssBytes) > slack;
    if (d.disagrees)
      a.notes.push_back(d.allocator + ": the replay predicts " + mibText(d.predictedHeapBytes) +
                        " of RSS against " + command.live.reference + ", the live runs show " +
                        mibText(d.liveRssBytes) + " of peak RSS.");
    a.differences.push_back(d);
  }
}

}  // namespace strata::compare
