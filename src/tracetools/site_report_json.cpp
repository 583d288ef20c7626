// formatSiteReportJson (site_report.hpp): the site tables of `strata stats --sites --json`,
// for scripts: the same sites, figures and symbolized frames as the text report.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "json.hpp"
#include "site_report.hpp"
#include "symbolize.hpp"

namespace strata::tracetools {
namespace {

const char* orderName(SiteOrder o) {
  switch (o) {
    case SiteOrder::Bytes: return "bytes";
    case SiteOrder::PeakLive: return "peak_live";
    case SiteOrder::Allocations: return "allocations";
  }
  return "";
}

std::string frameJson(const SourceFrame& f) {
  return "{\"address\": " + std::to_string(f.address) +
         ", \"module\": " + support::jsonString(f.module) +
         ", \"offset\": " + std::to_string(f.offset) +
         ", \"function\": " + support::jsonString(f.function) +
         ", \"file\": " + support::jsonString(f.file) + ", \"line\": " + std::to_string(f.line) +
         "}";
}

}  // namespace

std::string formatSiteReportJson(const SiteStats& s, std::size_t top,
                                 std::span<const SiteOrder> orders) {
  std::vector<std::vector<const SiteFigures*>> tables;
  std::vector<std::uint64_t> addresses;
  std::map<std::uint64_t, std::size_t> firstFrame;  // site id -> index of its first address
  for (const SiteOrder o : orders) {
    tables.push_back(s.present ? topSites(s, o, top) : std::vector<const SiteFigures*>{});
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

  std::string out = "{\"tables\": [";
  for (std::size_t t = 0; t < tables.size(); ++t) {
    out += t == 0 ? "" : ", ";
    out += "{\"order\": \"" + std::string(orderName(orders[t])) + "\", \"sites\": [";
    for (std::size_t i = 0; i < tables[t].size(); ++i) {
      const SiteFigures& f = *tables[t][i];
      const auto& frames = s.frames[f.site];
      const std::size_t shown = std::min(frames.size(), kShownFrames);
      out += i == 0 ? "" : ", ";
      out += "{\"site\": " + std::to_string(f.site) + ", \"bytes\": " + std::to_string(f.bytes) +
             ", \"allocations\": " + std::to_string(f.allocations) +
             ", \"peak_live_bytes\": " + std::to_string(f.peakLiveBytes) + ", \"frames\": [";
      for (std::size_t k = 0; k < shown; ++k)
        out += (k == 0 ? "" : ", ") + frameJson(resolved[firstFrame[f.site] + k]);
      out += "], \"more_frames\": " + std::to_string(frames.size() - shown) + "}";
    }
    out += "]}";
  }
  out += "], \"notes\": [";
  const auto& notes = symbolizer.warnings();
  for (std::size_t i = 0; i < notes.size(); ++i)
    out += (i == 0 ? "" : ", ") + support::jsonString(notes[i]);
  out += "]}";
  return out;
}

}  // namespace strata::tracetools
