// diffFolders (diff_model.hpp): two `strata compare` folders, trace by trace (by name): the
// peaks, each allocator's peak heap, fragmentation and time, their heap curves from the
// series files, and the sites when both were compared with --sites.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "diff/diff_curve.hpp"
#include "diff/diff_documents.hpp"
#include "diff/diff_model.hpp"
#include "support/error.hpp"

namespace strata::diff {
namespace {

namespace fs = std::filesystem;

// Heap curves drawn: the first traces, the first allocators of each (the page stays legible).
constexpr std::size_t kCurveTraces = 2, kCurveAllocators = 4;

// Throws when the folders ran programs of different names (programs of both, none shared).
void checkPrograms(const std::vector<ResultsTrace>& a, const std::vector<ResultsTrace>& b,
                   const DiffOptions& options) {
  std::set<std::string> namesA;
  std::string firstA, firstB;
  for (const ResultsTrace& t : a)
    if (!t.program.empty()) {
      namesA.insert(fs::path(t.program).filename().string());
      if (firstA.empty()) firstA = t.program;
    }
  for (const ResultsTrace& t : b)
    if (!t.program.empty()) {
      if (namesA.count(fs::path(t.program).filename().string()) != 0) return;
      if (firstB.empty()) firstB = t.program;
    }
  checkSamePrograms(firstA, firstB, "a result folder", options);
}

RunSummary traceSummary(const ResultsTrace& t) {
  return RunSummary{.path = t.path,
                    .kind = "trace",
                    .program = t.program,
                    .peakLiveBytes = t.peakLiveBytes,
                    .totalBytes = t.totalBytes,
                    .allocations = t.allocations};
}

void addTo(RunSummary& sum, const ResultsTrace& t) {
  sum.peakLiveBytes += t.peakLiveBytes;
  sum.totalBytes += t.totalBytes;
  sum.allocations += t.allocations;
  if (sum.program.empty()) sum.program = t.program;
}

const ReplayEntry* findReplay(const ResultsTrace& t, const std::string& allocator) {
  for (const ReplayEntry& e : t.replays)
    if (e.allocator == allocator) return &e;
  return nullptr;
}

// One heap curve, or a note when its series file cannot be read.
void addCurve(DiffResult& r, const std::string& dir, const std::string& trace, const ReplayEntry& e,
              const std::string& run) {
  if (e.seriesFile.empty()) return;
  try {
    Curve c = csvCurve((fs::path(dir) / e.seriesFile).string(), "event", "heap_bytes");
    c.label = trace + ": " + e.allocator + " heap bytes";
    c.run = run;
    r.curves.push_back(std::move(c));
  } catch (const support::Error& err) {
    r.notes.push_back(std::string("curve left out: ") + err.what());
  }
}

// The allocators of one trace in both folders, and the heap curves of the first few.
void compareAllocators(DiffResult& r, const std::string& dirA, const std::string& dirB,
                       const ResultsTrace& a, const ResultsTrace& b, bool curves) {
  std::size_t drawn = 0;
  for (const ReplayEntry& ea : a.replays) {
    const ReplayEntry* eb = findReplay(b, ea.allocator);
    if (eb == nullptr) continue;
    r.allocators.push_back(
        AllocatorDiff{.trace = a.name, .allocator = ea.allocator, .a = ea.side, .b = eb->side});
    if (!curves || drawn == kCurveAllocators) continue;
    ++drawn;
    addCurve(r, dirA, a.name, ea, "a");
    addCurve(r, dirB, b.name, *eb, "b");
  }
}

// The sites of one trace when both folders have them; false otherwise.
bool compareSites(DiffResult& r, const std::string& dirA, const std::string& dirB,
                  const ResultsTrace& a, const ResultsTrace& b) {
  if (a.sitesFile.empty() || b.sitesFile.empty()) return false;
  std::vector<SiteDiff> sites =
      matchSites(readSitesDocument((fs::path(dirA) / a.sitesFile).string()),
                 readSitesDocument((fs::path(dirB) / b.sitesFile).string()), a.name);
  r.sites.insert(r.sites.end(), std::make_move_iterator(sites.begin()),
                 std::make_move_iterator(sites.end()));
  return true;
}

std::string names(const std::vector<ResultsTrace>& traces) {
  std::string out;
  for (const ResultsTrace& t : traces) out += (out.empty() ? "" : ", ") + t.name;
  return out.empty() ? "none" : out;
}

}  // namespace

DiffResult diffFolders(const std::string& dirA, const std::string& dirB,
                       const DiffOptions& options) {
  const std::vector<ResultsTrace> ta = readResults(dirA), tb = readResults(dirB);
  checkPrograms(ta, tb, options);
  DiffResult r;
  r.a = RunSummary{.path = dirA,
                   .kind = "results",
                   .program = {},
                   .peakLiveBytes = 0,
                   .totalBytes = 0,
                   .allocations = 0};
  r.b = RunSummary{.path = dirB,
                   .kind = "results",
                   .program = {},
                   .peakLiveBytes = 0,
                   .totalBytes = 0,
                   .allocations = 0};
  r.thresholdPercent = options.thresholdPercent;
  std::size_t withSites = 0;
  for (const ResultsTrace& a : ta) {
    const auto it = std::find_if(tb.begin(), tb.end(),
                                 [&a](const ResultsTrace& t) { return t.name == a.name; });
    if (it == tb.end()) {
      r.notes.push_back("trace " + a.name + " is in A only");
      continue;
    }
    addTo(r.a, a);
    addTo(r.b, *it);
    r.traces.push_back(TraceDiff{.name = a.name, .a = traceSummary(a), .b = traceSummary(*it)});
    compareAllocators(r, dirA, dirB, a, *it, r.traces.size() <= kCurveTraces);
    withSites += compareSites(r, dirA, dirB, a, *it) ? 1 : 0;
  }
  if (r.traces.empty())
    throw support::Error("A (" + dirA + ") and B (" + dirB +
                         ") hold no trace of the same name (A: " + names(ta) + "; B: " + names(tb) +
                         ")");
  for (const ResultsTrace& b : tb)
    if (std::none_of(ta.begin(), ta.end(),
                     [&b](const ResultsTrace& t) { return t.name == b.name; }))
      r.notes.push_back("trace " + b.name + " is in B only");
  r.sitesCompared = withSites != 0;
  if (withSites == 0)
    r.notes.push_back(
        "the folders were not both compared with --sites: peak live bytes by trace only");
  else if (withSites < r.traces.size())
    r.notes.push_back("sites compared for " + std::to_string(withSites) + " of " +
                      std::to_string(r.traces.size()) + " traces (the others lack a sites file)");
  judge(r);
  return r;
}

}  // namespace strata::diff
