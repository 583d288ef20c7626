// SiteTally: the figures by allocation site (site_stats.hpp). An object is live at an event
// when it was born at or before that event and died after it (or never).
#include "tracetools/site_stats.hpp"

#include <algorithm>

namespace strata::tracetools {

// The per-site figures: counts, bytes, at the peak, at the end (never freed), temporary.
void SiteTally::figures(SiteStats& s) const {
  for (std::size_t id = 0; id < sites_.size(); ++id) {
    const Site& site = sites_[id];
    const bool sincePeak = site.peakStamp == peaks_;
    SiteFigures& f = s.bySite[id < s.bySite.size() ? id : 0];
    f.allocations += site.allocations;
    f.bytes += site.bytes;
    f.peakLiveBytes += sincePeak ? site.peakBytes : site.liveBytes;
    f.peakLiveObjects += sincePeak ? site.peakObjects : site.liveObjects;
    f.neverFreedBytes += site.liveBytes;
    f.neverFreedObjects += site.liveObjects;
    f.temporaryAllocations += site.temporaryAllocations;
    f.temporaryBytes += site.temporaryBytes;
  }
}

// The moments, every site's bytes live at them, and each site's largest of those.
void SiteTally::timeline(SiteStats& s) const {
  const Moments moments = chooseMoments(clock_, events_, kTimelineMoments, peakEvent_, peakNs_);
  std::vector<std::uint64_t> atPeak(sites_.size()), atEnd(sites_.size());
  for (std::size_t id = 0; id < sites_.size(); ++id) {
    atPeak[id] = sites_[id].peakStamp == peaks_ ? sites_[id].peakBytes : sites_[id].liveBytes;
    atEnd[id] = sites_[id].liveBytes;
  }
  s.timeline.liveBytes = history_.timelines(s.bySite.size(), moments.events, peakEvent_, atPeak, atEnd);
  s.timeline.events = moments.events;
  s.timeline.ns = moments.ns;
  if (s.timeline.events.empty()) return;
  for (SiteFigures& f : s.bySite) {
    const auto row = s.timeline.site(f.site);
    f.maxLiveBytes = *std::max_element(row.begin(), row.end());
  }
}

SiteStats SiteTally::finish(bool present, const trace::SiteTable<>& table) const {
  SiteStats s;
  s.present = present;
  s.peakEvent = peakEvent_;
  s.peakNs = peakNs_;
  const std::uint64_t sites = table.siteCount();
  s.bySite.resize(sites + 1);
  s.frames.resize(sites + 1);
  for (std::uint64_t id = 0; id <= sites; ++id) {
    s.bySite[id].site = id;
    const auto f = table.frames(id);
    s.frames[id].assign(f.begin(), f.end());
  }
  figures(s);
  timeline(s);
  s.curve = curve_.finish();
  for (std::size_t i = 0; i < table.moduleCount(); ++i) {
    const trace::ModuleInfo m = table.module(i);
    s.modules.push_back(Module{m.start, m.end, m.bias, std::string(m.path, m.pathLength),
                               std::string(reinterpret_cast<const char*>(m.buildId),
                                           m.buildIdLength)});
  }
  return s;
}

}  // namespace strata::tracetools
