// SiteTally: the figures by allocation site (site_stats.hpp). An object is live at the peak
// when it was born at or before the peak's event and died after it (or never).
#include "site_stats.hpp"

namespace strata::tracetools {

void SiteTally::born(std::uint64_t id, std::uint64_t site, std::uint64_t size,
                     std::uint64_t event) {
  if (id >= objects_.size())
    objects_.resize(id + 1 > 2 * objects_.size() ? id + 1 : 2 * objects_.size());
  objects_[id] = Object{site, size, event, ~std::uint64_t{0}};
}

void SiteTally::died(std::uint64_t id, std::uint64_t event) {
  if (id < objects_.size()) objects_[id].death = event;
}

SiteStats SiteTally::finish(bool present, const trace::SiteTable<>& table) const {
  SiteStats s;
  s.present = present;
  s.peakEvent = peakEvent_;
  const std::uint64_t sites = table.siteCount();
  s.bySite.resize(sites + 1);
  s.frames.resize(sites + 1);
  for (std::uint64_t id = 0; id <= sites; ++id) {
    s.bySite[id].site = id;
    const auto f = table.frames(id);
    s.frames[id].assign(f.begin(), f.end());
  }
  for (const Object& o : objects_) {
    if (o.birth == 0) continue;  // an id that was a reap, or never an object
    SiteFigures& f = s.bySite[o.site <= sites ? o.site : 0];
    ++f.allocations;
    f.bytes += o.size;
    if (o.birth <= peakEvent_ && o.death > peakEvent_) {
      ++f.peakLiveObjects;
      f.peakLiveBytes += o.size;
    }
  }
  for (std::size_t i = 0; i < table.moduleCount(); ++i) {
    const trace::ModuleInfo m = table.module(i);
    s.modules.push_back(Module{m.start, m.end, m.bias, std::string(m.path, m.pathLength),
                               std::string(reinterpret_cast<const char*>(m.buildId),
                                           m.buildIdLength)});
  }
  return s;
}

}  // namespace strata::tracetools
