// Allocation sites of two runs matched by what their stacks say, not by their ids: site ids
// and return addresses differ between runs (ASLR, another order of first calls), so a frame
// is known by its function, file and line, or by its module and offset when unsymbolized.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "diff/diff_model.hpp"
#include "tracetools/site_stats.hpp"

namespace strata::diff {

// One site of one run: its stack and figures.
struct RunSite {
  std::vector<Frame> stack;
  SiteFigures figures;
};

// The key two runs share for a frame: "function|file|line" when symbolized, else
// "module+0xoffset" (or the bare offset when outside every module).
std::string frameKey(const Frame& frame);

// Every site of either run, matched by the keys of its frames (sites of one run with the same
// key summed), the run that lacks one given zeros. Unsorted; judge() sorts.
std::vector<SiteDiff> matchSites(const std::vector<RunSite>& a, const std::vector<RunSite>& b,
                                 const std::string& trace);

// The sites of a trace with something in them, their innermost frames (at most `depth`)
// symbolized in one go; the symbolizer's warnings appended to `notes`.
std::vector<RunSite> symbolizedSites(const tracetools::SiteStats& sites, std::size_t depth,
                                     std::vector<std::string>& notes);

}  // namespace strata::diff
