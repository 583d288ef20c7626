// SiteHistory (site_history.hpp): the sites' changes of live bytes between the clock's
// samples, merged when the clock halves its samples, and summed at the end into the bytes
// every site held live at each moment.
#include "tracetools/site_history.hpp"

#include "tracetools/site_timeline.hpp"

namespace strata::tracetools {

void SiteHistory::grow(std::uint64_t site) {
  const std::size_t n = static_cast<std::size_t>(site) + 1;
  pending_.resize(n, 0);
  touched_.resize(n, false);
  mergeSlot_.resize(n, 0);
}

// A point at this event: the sites' changes since the last point, those that came back to
// where they were left out.
void SiteHistory::close() {
  for (const std::uint64_t site : touchedSites_) {
    if (pending_[site] != 0) changes_.push_back(Change{site, pending_[site]});
    pending_[site] = 0;
    touched_[site] = false;
  }
  touchedSites_.clear();
  pointEnd_.push_back(changes_.size());
  if (pointEnd_.size() == EventClock::kMaxSamples) halve();
}

// As the clock keeps every other sample (the second of each pair), each pair of points
// becomes one: a site's changes in both summed. In place: a pair's merged changes are never
// more than those read so far.
void SiteHistory::halve() {
  std::size_t out = 0, begin = 0;
  for (std::size_t m = 0; 2 * m + 1 < pointEnd_.size(); ++m) {
    const std::size_t start = out, end = pointEnd_[2 * m + 1];
    for (std::size_t i = begin; i < end; ++i) {
      const Change c = changes_[i];
      std::size_t& slot = mergeSlot_[c.site];  // 1 + where the site's change is, or 0
      if (slot == 0) {
        changes_[out] = c;
        slot = ++out;
      } else {
        changes_[slot - 1].delta += c.delta;
      }
    }
    std::size_t kept = start;
    for (std::size_t i = start; i < out; ++i) {
      mergeSlot_[changes_[i].site] = 0;
      if (changes_[i].delta != 0) changes_[kept++] = changes_[i];
    }
    out = kept;
    begin = end;
    pointEnd_[m] = out;
  }
  changes_.resize(out);
  pointEnd_.resize(pointEnd_.size() / 2);
  stride_ *= 2;
}

std::vector<std::uint64_t> SiteHistory::timelines(std::size_t sites,
                                                  std::span<const std::uint64_t> moments,
                                                  std::uint64_t peakEvent,
                                                  std::span<const std::uint64_t> atPeak,
                                                  std::span<const std::uint64_t> atEnd) const {
  const std::size_t k = moments.size();
  if (k == 0 || sites == 0) return {};
  std::vector<std::uint64_t> rows(sites * k, 0);
  auto put = [&rows, sites, k](std::size_t j, std::span<const std::uint64_t> bySite) {
    for (std::size_t site = 0; site < bySite.size(); ++site)
      rows[(site < sites ? site : 0) * k + j] += bySite[site];
  };
  std::vector<std::uint64_t> live(pending_.size(), 0);  // by site, at the point reached
  std::size_t point = 0, next = 0;
  for (std::size_t j = 0; j < k; ++j) {
    const std::uint64_t m = moments[j];
    if (m % stride_ == 0 && m / stride_ <= pointEnd_.size()) {
      for (; point < m / stride_; ++point)
        for (; next < pointEnd_[point]; ++next) live[changes_[next].site] += changes_[next].delta;
      put(j, live);
    } else {
      put(j, m == peakEvent ? atPeak : atEnd);
    }
  }
  return rows;
}

}  // namespace strata::tracetools
