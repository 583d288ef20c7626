// The documents of a `strata compare` folder that `strata diff` reads (docs/toolkit/json.md):
// results.json (strata-compare-1) and the sites files (strata-sites-1), checked as they are
// read, every problem a support::Error naming the file.
#pragma once
#include <string>
#include <vector>

#include "diff/diff_sites.hpp"
#include "support/json_value.hpp"

namespace strata::diff {

// One allocator's replay of a trace, as results.json has it.
struct ReplayEntry {
  std::string allocator, seriesFile;  // seriesFile: relative to the folder; may be empty
  AllocatorSide side;
};

// One trace of results.json.
struct ResultsTrace {
  std::string name, path, program, sitesFile;  // sitesFile: empty without --sites
  std::uint64_t peakLiveBytes = 0, totalBytes = 0, allocations = 0;
  std::vector<ReplayEntry> replays;
};

// DIR/results.json read and checked: present, JSON, whole, format strata-compare-1, traces.
std::vector<ResultsTrace> readResults(const std::string& dir);

// A strata-sites-1 document: its listed sites with their stacks (`other` left out).
std::vector<RunSite> readSitesDocument(const std::string& path);

}  // namespace strata::diff
