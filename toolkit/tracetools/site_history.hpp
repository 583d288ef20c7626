// SiteHistory: how each site's live bytes changed between the event clock's samples
// (site_timeline.hpp), kept as the trace is read, so that the bytes every site held live at
// the timeline's moments, chosen only at the end, come out of the same pass without a record
// per object. The clock samples every `stride`-th event and doubles the stride when it holds
// EventClock::kMaxSamples; the history closes a point at the same events and merges pairs of
// points when the clock drops every other sample, so each of its points is one of the clock's.
// Cost: 16 bytes for each site that changed between two points and did not come back to
// where it was, at most EventClock::kMaxSamples a site, and 24 bytes a site.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace strata::tracetools {

class SiteHistory {
 public:
  // Site `site`'s live bytes changed by `delta` (modulo 2^64) at the current event.
  void change(std::uint64_t site, std::uint64_t delta) {
    if (site >= pending_.size()) grow(site);
    if (!touched_[site]) {
      touched_[site] = true;
      touchedSites_.push_back(site);
    }
    pending_[site] += delta;
  }
  // After every event (counted from 1, each once, in order).
  void tick(std::uint64_t event) {
    if ((event & (stride_ - 1)) == 0) close();
  }

  // The bytes each of `sites` sites held live at each of `moments` (sorted, each a sample of
  // the clock or neither, then taken from `atPeak` or `atEnd` as `peakEvent` says: a moment
  // past the last point is the trace's last event). Row `site` of the result is that site's;
  // a site >= sites counts as site 0. `atPeak` and `atEnd` hold one value a site, indexed as
  // change() was called.
  std::vector<std::uint64_t> timelines(std::size_t sites, std::span<const std::uint64_t> moments,
                                       std::uint64_t peakEvent,
                                       std::span<const std::uint64_t> atPeak,
                                       std::span<const std::uint64_t> atEnd) const;

 private:
  struct Change {
    std::uint64_t site, delta;
  };
  void grow(std::uint64_t site);
  void close();
  void halve();

  std::vector<Change> changes_;           // every point's changes, point after point
  std::vector<std::size_t> pointEnd_;     // where each point's changes end in changes_
  std::vector<std::uint64_t> pending_;    // by site: the change since the last point
  std::vector<bool> touched_;             // by site: changed since the last point
  std::vector<std::uint64_t> touchedSites_;
  std::vector<std::size_t> mergeSlot_;    // by site: scratch for halve()
  std::uint64_t stride_ = 1;              // points are at the multiples of stride_
};

}  // namespace strata::tracetools
