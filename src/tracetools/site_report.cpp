// formatSiteReport (site_report.hpp): picks each table's top sites, symbolizes their frames in
// one Symbolizer call, and lays the rows out: figures on the site's first line, its frames
// below one another.
#include "site_report.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

#include "symbolize.hpp"

namespace strata::tracetools {
namespace {

std::uint64_t key(const SiteFigures& f, SiteOrder o) {
  switch (o) {
    case SiteOrder::Bytes: return f.bytes;
    case SiteOrder::PeakLive: return f.peakLiveBytes;
    case SiteOrder::Allocations: return f.allocations;
  }
  return 0;
}

const char* title(SiteOrder o) {
  switch (o) {
    case SiteOrder::Bytes: return "by bytes allocated";
    case SiteOrder::PeakLive: return "by bytes live at the peak";
    case SiteOrder::Allocations: return "by allocations";
  }
  return "";
}

}  // namespace

std::vector<const SiteFigures*> topSites(const SiteStats& s, SiteOrder o, std::size_t top) {
  std::vector<const SiteFigures*> v;
  for (const SiteFigures& f : s.bySite)
    if (key(f, o) != 0) v.push_back(&f);
  const std::size_t n = std::min(top, v.size());
  std::partial_sort(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n), v.end(),
                    [o](const SiteFigures* a, const SiteFigures* b) {
                      return key(*a, o) != key(*b, o) ? key(*a, o) > key(*b, o) : a->site < b->site;
                    });
  v.resize(n);
  return v;
}

namespace {

// "1,234,567".
std::string grouped(std::uint64_t v) {
  std::string s = std::to_string(v);
  for (std::ptrdiff_t i = static_cast<std::ptrdiff_t>(s.size()) - 3; i > 0; i -= 3)
    s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

}  // namespace

std::string formatSiteReport(const SiteStats& s, std::size_t top,
                             std::span<const SiteOrder> orders) {
  if (!s.present)
    return "allocation sites: the trace carries none\n";
  std::vector<std::vector<const SiteFigures*>> tables;
  std::vector<std::uint64_t> addresses;
  std::map<std::uint64_t, std::size_t> firstFrame;  // site id -> index of its first address
  for (const SiteOrder o : orders) {
    tables.push_back(topSites(s, o, top));
    for (const SiteFigures* f : tables.back()) {
      if (!firstFrame.emplace(f->site, addresses.size()).second) continue;
      const auto& frames = s.frames[f->site];
      addresses.insert(addresses.end(), frames.begin(),
                       frames.begin() + static_cast<std::ptrdiff_t>(
                                            std::min(frames.size(), kShownFrames)));
    }
  }
  Symbolizer symbolizer(s.modules);
  const std::vector<SourceFrame> resolved = symbolizer.resolve(addresses);

  std::string out;
  char buf[160];
  for (std::size_t t = 0; t < tables.size(); ++t) {
    std::snprintf(buf, sizeof buf, "%stop %zu sites %s\n", t == 0 ? "" : "\n",
                  tables[t].size(), title(orders[t]));
    out += buf;
    if (tables[t].empty()) {
      out += "  (none)\n";
      continue;
    }
    std::snprintf(buf, sizeof buf, "  %16s %12s %16s  %s\n", "bytes", "allocations",
                  "live at peak", "site (innermost frame first)");
    out += buf;
    for (const SiteFigures* f : tables[t]) {
      std::snprintf(buf, sizeof buf, "  %16s %12s %16s  ", grouped(f->bytes).c_str(),
                    grouped(f->allocations).c_str(), grouped(f->peakLiveBytes).c_str());
      out += buf;
      const auto& frames = s.frames[f->site];
      if (frames.empty()) {
        out += f->site == 0 ? "(site unknown)\n" : "(no frames)\n";
        continue;
      }
      const std::size_t shown = std::min(frames.size(), kShownFrames);
      for (std::size_t k = 0; k < shown; ++k) {
        if (k != 0) out += std::string(2 + 16 + 1 + 12 + 1 + 16 + 2, ' ') + "<- ";
        out += describe(resolved[firstFrame[f->site] + k]) + "\n";
      }
      if (frames.size() > shown)
        out += std::string(2 + 16 + 1 + 12 + 1 + 16 + 2, ' ') + "<- ... " +
               std::to_string(frames.size() - shown) + " more\n";
    }
  }
  for (const std::string& w : symbolizer.warnings()) out += "note: " + w + "\n";
  return out;
}

}  // namespace strata::tracetools
