// The tables of allocation sites `strata stats --sites` and `strata compare --sites` print:
// the top sites by bytes allocated, by bytes live at the trace's peak, and by allocations,
// each site as its frames (function and file:line where debug information exists), innermost
// first. Symbolization happens once, for every frame the tables show.
#pragma once
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "site_stats.hpp"

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

// The `top` sites with the largest figure of order o, largest first (ties: the lower id);
// sites whose figure is 0 are left out.
std::vector<const SiteFigures*> topSites(const SiteStats& s, SiteOrder o, std::size_t top);

}  // namespace strata::tracetools
