// SiteTally: the figures by allocation site (site_stats.hpp). An object is live at an event
// when it was born at or before that event and died after it (or never).
#include "tracetools/site_stats.hpp"

#include <algorithm>

namespace strata::tracetools {

void SiteTally::born(std::uint64_t id, std::uint64_t site, std::uint64_t size,
                     std::uint64_t event) {
  if (id >= objects_.size())
    objects_.resize(id + 1 > 2 * objects_.size() ? id + 1 : 2 * objects_.size());
  objects_[id] = TallyObject{site, size, event, kNeverDied};
  lastBorn_ = id;
}

void SiteTally::died(std::uint64_t id, std::uint64_t event) {
  if (id >= objects_.size()) return;
  TallyObject& o = objects_[id];
  o.death = event;
  if (id != lastBorn_) return;
  // Nothing was allocated since this object: a temporary allocation.
  lastBorn_ = kNeverDied;
  if (o.site >= temporary_.size()) temporary_.resize(o.site + 1);
  ++temporary_[o.site].allocations;
  temporary_[o.site].bytes += o.size;
}

// The per-site figures from the objects: counts, bytes, at the peak, at the end, temporary.
void SiteTally::figures(SiteStats& s) const {
  const std::uint64_t sites = s.bySite.size() - 1;
  for (const TallyObject& o : objects_) {
    if (o.birth == 0) continue;  // an id that was a reap, or never an object
    SiteFigures& f = s.bySite[o.site <= sites ? o.site : 0];
    ++f.allocations;
    f.bytes += o.size;
    if (o.birth <= peakEvent_ && o.death > peakEvent_) {
      ++f.peakLiveObjects;
      f.peakLiveBytes += o.size;
    }
    if (o.death == kNeverDied) {
      ++f.neverFreedObjects;
      f.neverFreedBytes += o.size;
    }
  }
  for (std::uint64_t site = 0; site < temporary_.size(); ++site) {
    SiteFigures& f = s.bySite[site <= sites ? site : 0];
    f.temporaryAllocations += temporary_[site].allocations;
    f.temporaryBytes += temporary_[site].bytes;
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
  const Moments moments = chooseMoments(clock_, events_, kTimelineMoments, peakEvent_, peakNs_);
  s.timeline.liveBytes = siteTimelines(objects_, s.bySite.size(), moments.events);
  s.timeline.events = moments.events;
  s.timeline.ns = moments.ns;
  if (!s.timeline.events.empty()) {
    for (SiteFigures& f : s.bySite) {
      const auto row = s.timeline.site(f.site);
      f.maxLiveBytes = *std::max_element(row.begin(), row.end());
    }
  }
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
