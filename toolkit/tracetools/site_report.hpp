// The tables of allocation sites `strata stats --sites` and `strata compare --sites` print:
// the top sites by bytes allocated, by bytes live at the trace's peak, and by allocations,
// each site as its frames (function and file:line where debug information exists), innermost
// first. Symbolization happens once, for every frame the tables show.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "support/json_writer.hpp"
#include "tracetools/site_stats.hpp"
#include "tracetools/symbolize.hpp"

namespace strata::tracetools {

enum class SiteOrder { Bytes, PeakLive, Allocations };

// How deep a site is shown: the innermost frames say where, a few callers say why.
inline constexpr std::size_t kShownFrames = 6;

// The report: one table per order, the `top` sites of each (sites with nothing in the
// table's column are left out), then the symbolizer's warnings. For a trace without sites,
// one line saying so.
std::string formatSiteReport(const SiteStats& sites, std::size_t top,
                             std::span<const SiteOrder> orders);

// The same report as one JSON object (site_report_json.cpp):
//   {"tables": [{"order": "bytes" | "peak_live" | "allocations", "sites": [{"site": ID,
//     "bytes": N, "allocations": N, "peak_live_bytes": N, "frames": [{"address": N,
//     "module": "...", "offset": N, "function": "...", "file": "...", "line": N}, ...],
//     "more_frames": N}, ...]}, ...], "notes": ["...", ...]}
// frames innermost first, at most kShownFrames; empty strings and line 0 where unknown.
std::string formatSiteReportJson(const SiteStats& sites, std::size_t top,
                                 std::span<const SiteOrder> orders);
// The same object's members ("tables", "notes") written into the object open in `w`.
void writeSiteReportJson(support::JsonWriter& w, const SiteStats& sites, std::size_t top,
                         std::span<const SiteOrder> orders);

// What both forms of the report show: per order its top sites (the largest figure first,
// ties: the lower id; sites whose figure is 0 left out), and the shown frames of every site
// in them (at most kShownFrames each), symbolized in one go.
struct ShownSites {
  std::vector<std::vector<const SiteFigures*>> tables;  // one per order
  std::vector<std::string> notes;                       // the symbolizer's warnings
  // The symbolized frame k (< shownFrames(site)) of a site in the tables.
  const SourceFrame& frame(std::uint64_t site, std::size_t k) const {
    return resolved.at(first.at(site) + k);
  }
  std::vector<SourceFrame> resolved;
  std::map<std::uint64_t, std::size_t> first;  // site id -> index of its first frame
};
ShownSites showSites(const SiteStats& s, std::size_t top, std::span<const SiteOrder> orders);

// The frames of a site the report shows.
inline std::size_t shownFrames(const SiteStats& s, std::uint64_t site) {
  return s.frames[site].size() < kShownFrames ? s.frames[site].size() : kShownFrames;
}

}  // namespace strata::tracetools
