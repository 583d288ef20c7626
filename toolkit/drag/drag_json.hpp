// `strata drag`'s results as DIR/drag.json (format strata-drag-1, docs/toolkit/json.md), and
// what it shares with the text report (drag_report.cpp): the notes said before the figures
// and the top sites by drag with their frames symbolized once for both.
//
//   {"format": "strata-drag-1", "command": S, "status": S, "seconds": N, "succeeded": B,
//    "notes": [S, ...],
//    "processes": [{"pid", "program", "analysed", "shown", "drag" (null when unbounded or
//                   not analysed), "drag_unbounded", "peak_actual_bytes", "peak_ideal_bytes",
//                   "increase_percent" (null when the ideal peak is 0)}, ...],
//    "shown": {"pid", "program", "drag", "drag_unbounded", "actual_area", "ideal_area",
//              "peak_actual_bytes", "peak_ideal_bytes", "increase_percent", "final_clock",
//              "objects", "events", "uncovered_objects", "uncovered_bytes", "trace_complete",
//              "last_use_complete"},
//    "curves_file": "curves.csv",
//    "sites": [{"site", "drag", "share_percent", "bytes", "objects",
//               "stack": [{"function", "file", "line", "module"}, ...]}, ...]}
// Stacks innermost first, as the text report shows them; empty strings and line 0 where
// unknown; "sites" is empty without --sites.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "drag/drag_report.hpp"
#include "tracetools/symbolize.hpp"

namespace strata::drag {

// The top sites by drag, each with the frames the report shows, symbolized.
struct SymbolizedSites {
  std::vector<SiteDrag> sites;
  std::vector<std::vector<tracetools::SourceFrame>> stacks;  // per site, innermost first
  std::vector<std::string> warnings;                         // the symbolizer's
};
// Empty when the trace has no sites.
SymbolizedSites symbolizeTopSites(const DragResult& r, std::size_t top);

// The notes said before the figures: the run's own, then what the analysis could not cover.
std::vector<std::string> reportNotes(const DragRunFacts& facts, const DragProcess& shown);

// A site's share of all the drag (memory held after last use), in percent.
double sharePercent(const DragResult& r, const SiteDrag& s);

// The document drag.json holds.
std::string dragJson(const DragRunFacts& facts, const std::vector<DragProcess>& processes,
                     const DragProcess& shown, const SymbolizedSites& sites);

}  // namespace strata::drag
