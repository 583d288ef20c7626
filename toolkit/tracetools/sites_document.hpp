// The sites document (format strata-sites-1, docs/toolkit/json.md "sites_file"): a trace's
// allocation sites with their symbolized stacks and figures, the bytes each held live over
// the run and the program's live-bytes curve, as `strata stats --sites` (DIR/sites.json) and
// `strata compare --sites` (DIR/<name>-sites.json) write it and report.html draws it.
// Only the listed sites' frames are symbolized: that is the costly part.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "tracetools/site_stats.hpp"
#include "tracetools/trace_stats.hpp"

namespace strata::tracetools {

// How many sites of each figure's top make it into a document.
inline constexpr std::size_t kListedPerFigure = 500;

// The sites a document lists: the union of the `perFigure` largest (sites with 0 left out)
// by bytes, allocations, bytes live at the peak, bytes never freed, temporary allocations and
// largest live at a moment; ordered by the largest share of the trace's total of any of those
// figures a site holds (ties: the lower id).
std::vector<std::uint64_t> listedSites(const SiteStats& s,
                                       std::size_t perFigure = kListedPerFigure);

// What the sites left out of a document add up to.
struct OtherSites {
  std::uint64_t sites = 0;  // sites that allocated and are not listed
  SiteFigures figures;      // their figures summed (site 0; maxLiveBytes: the largest of liveBytes)
  std::vector<std::uint64_t> liveBytes;  // their bytes live at the timeline's moments, summed
};
OtherSites otherSites(const SiteStats& s, std::span<const std::uint64_t> listed);

// Sites that created at least one object (site 0 included when it did).
std::uint64_t allocatingSites(const SiteStats& s);

// The document for the trace at `tracePath` (named in it as given), from its statistics and
// figures by site. A frame in no module has module "" and its address as offset. Adds to
// what json.md lists: "peak_ns", "listed_sites", each site's
// "max_live_bytes", "other"'s "sites", the timeline's "other_live_bytes" and "notes" (the
// symbolizer's warnings).
std::string sitesDocument(const std::string& tracePath, const TraceStats& stats,
                          const SiteStats& sites, std::size_t perFigure = kListedPerFigure);

// Writes sitesDocument(...) to `file` (through a temporary name beside it, renamed over it);
// throws support::Error naming it when it cannot.
void writeSitesDocument(const std::filesystem::path& file, const std::string& tracePath,
                        const TraceStats& stats, const SiteStats& sites);

}  // namespace strata::tracetools
