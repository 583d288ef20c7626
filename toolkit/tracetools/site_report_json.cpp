// formatSiteReportJson (site_report.hpp): the site tables of `strata stats --sites --json`,
// for scripts: the same sites, figures and symbolized frames as the text report.
#include <string>

#include "support/json_writer.hpp"
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

void writeFrame(support::JsonWriter& w, const SourceFrame& f) {
  w.object().field("address", f.address).field("module", f.module).field("offset", f.offset);
  w.field("function", f.function).field("file", f.file).field("line", f.line).end();
}

// One table: its order and its sites, each with its shown frames.
void writeTable(support::JsonWriter& w, const SiteStats& s, const ShownSites& shown,
                std::size_t t, SiteOrder order) {
  w.object().field("order", orderName(order)).array("sites");
  for (const SiteFigures* f : shown.tables[t]) {
    const std::size_t n = shownFrames(s, f->site);
    w.object().field("site", f->site).field("bytes", f->bytes);
    w.field("allocations", f->allocations).field("peak_live_bytes", f->peakLiveBytes);
    w.array("frames");
    for (std::size_t k = 0; k < n; ++k) writeFrame(w, shown.frame(f->site, k));
    w.end().field("more_frames", s.frames[f->site].size() - n).end();
  }
  w.end().end();
}

}  // namespace

void writeSiteReportJson(support::JsonWriter& w, const SiteStats& s, std::size_t top,
                         std::span<const SiteOrder> orders) {
  const ShownSites shown = showSites(s, top, orders);
  w.array("tables");
  for (std::size_t t = 0; t < shown.tables.size(); ++t) writeTable(w, s, shown, t, orders[t]);
  w.end().array("notes", shown.notes);
}

std::string formatSiteReportJson(const SiteStats& s, std::size_t top,
                                 std::span<const SiteOrder> orders) {
  support::JsonWriter w;
  w.object();
  writeSiteReportJson(w, s, top, orders);
  return w.end().text();
}

}  // namespace strata::tracetools
