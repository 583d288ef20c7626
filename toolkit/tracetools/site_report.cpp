// formatSiteReport (site_report.hpp): picks each table's top sites, symbolizes their frames in
// one Symbolizer call, and lays the rows out: figures on the site's first line, its frames
// below one another.
#include "tracetools/site_report.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

#include "tracetools/symbolize.hpp"
#include "support/format.hpp"

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

// The `top` sites with the largest key, largest first (ties: the lower id).
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

using support::grouped;  // "1,234,567"

}  // namespace

ShownSites showSites(const SiteStats& s, std::size_t top, std::span<const SiteOrder> orders) {
  ShownSites shown;
  std::vector<std::uint64_t> addresses;
  for (const SiteOrder o : orders) {
    shown.tables.push_back(s.present ? topSites(s, o, top) : std::vector<const SiteFigures*>{});
    for (const SiteFigures* f : shown.tables.back()) {
      if (!shown.first.emplace(f->site, addresses.size()).second) continue;
      const auto& frames = s.frames[f->site];
      addresses.insert(addresses.end(), frames.begin(),
                       frames.begin() + static_cast<std::ptrdiff_t>(shownFrames(s, f->site)));
    }
  }
  Symbolizer symbolizer(s.modules);
  shown.resolved = symbolizer.resolve(addresses);
  shown.notes = symbolizer.warnings();
  return shown;
}

std::string formatSiteReport(const SiteStats& s, std::size_t top,
                             std::span<const SiteOrder> orders) {
  if (!s.present)
    return "allocation sites: the trace carries none\n";
  const ShownSites shown = showSites(s, top, orders);
  const auto& tables = shown.tables;

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
      const std::size_t n = shownFrames(s, f->site);
      for (std::size_t k = 0; k < n; ++k) {
        if (k != 0) out += std::string(2 + 16 + 1 + 12 + 1 + 16 + 2, ' ') + "<- ";
        out += describe(shown.frame(f->site, k)) + "\n";
      }
      if (frames.size() > n)
        out += std::string(2 + 16 + 1 + 12 + 1 + 16 + 2, ' ') + "<- ... " +
               std::to_string(frames.size() - n) + " more\n";
    }
  }
  for (const std::string& w : shown.notes) out += "note: " + w + "\n";
  return out;
}

}  // namespace strata::tracetools
