// formatSiteReportJson (site_report.hpp): the site tables of `strata stats --sites --json`,
// for scripts: the same sites, figures and symbolized frames as the text report.
#include <string>

#include "support/json.hpp"
#include "tracetools/site_report.hpp"

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
  const ShownSites shown = showSites(s, top, orders);
  std::string out = "{\"tables\": [";
  for (std::size_t t = 0; t < shown.tables.size(); ++t) {
    out += t == 0 ? "" : ", ";
    out += "{\"order\": \"" + std::string(orderName(orders[t])) + "\", \"sites\": [";
    for (std::size_t i = 0; i < shown.tables[t].size(); ++i) {
      const SiteFigures& f = *shown.tables[t][i];
      const std::size_t n = shownFrames(s, f.site);
      out += i == 0 ? "" : ", ";
      out += "{\"site\": " + std::to_string(f.site) + ", \"bytes\": " + std::to_string(f.bytes) +
             ", \"allocations\": " + std::to_string(f.allocations) +
             ", \"peak_live_bytes\": " + std::to_string(f.peakLiveBytes) + ", \"frames\": [";
      for (std::size_t k = 0; k < n; ++k)
        out += (k == 0 ? "" : ", ") + frameJson(shown.frame(f.site, k));
      out += "], \"more_frames\": " + std::to_string(s.frames[f.site].size() - n) + "}";
    }
    out += "]}";
  }
  out += "], \"notes\": [";
  for (std::size_t i = 0; i < shown.notes.size(); ++i)
    out += (i == 0 ? "" : ", ") + support::jsonString(shown.notes[i]);
  out += "]}";
  return out;
}

}  // namespace strata::tracetools
