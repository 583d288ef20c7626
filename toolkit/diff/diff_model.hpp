// `strata diff A B`: what changed between two runs of one program, as typed figures. A and B
// are two traces (figures by allocation site when they carry sites) or two result folders of
// `strata compare` (results.json: per trace and allocator the peak heap, fragmentation and
// time; the sites documents when both were compared with --sites). The model is computed by
// diffTraces (diff_traces.cpp) or diffFolders (diff_folders.cpp), judged against a threshold
// (diff_threshold.cpp) and rendered as text (diff_text.cpp) or diff.json (diff_json.cpp);
// runDiff (diff_run.cpp) does all of it for the command.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace strata::diff {

// One run as a whole: figures summed over the traces of a folder that both folders hold.
struct RunSummary {
  std::string path;
  std::string kind;     // "trace" | "results"
  std::string program;  // the program's path; empty when the input does not say
  std::uint64_t peakLiveBytes = 0;
  std::uint64_t totalBytes = 0;
  std::uint64_t allocations = 0;
};

// One frame of a site's stack as both runs can name it: function, file and line when
// symbolized, else the module and the offset in it (addresses differ between runs).
struct Frame {
  std::string function, file, module;
  unsigned line = 0;
  std::uint64_t offset = 0;
};

struct SiteFigures {
  std::uint64_t bytes = 0, allocations = 0, peakLiveBytes = 0;
};

// One allocation site in both runs (zeros in the run that lacks it).
struct SiteDiff {
  std::string trace;         // folders: the trace's name; traces: empty
  std::vector<Frame> stack;  // innermost first
  SiteFigures a, b;
  std::int64_t peakLiveChange() const {
    return static_cast<std::int64_t>(b.peakLiveBytes) - static_cast<std::int64_t>(a.peakLiveBytes);
  }
  std::int64_t bytesChange() const {
    return static_cast<std::int64_t>(b.bytes) - static_cast<std::int64_t>(a.bytes);
  }
  std::int64_t allocationsChange() const {
    return static_cast<std::int64_t>(b.allocations) - static_cast<std::int64_t>(a.allocations);
  }
};

// A curve of one run: ys over xs (live bytes over events, an allocator's heap over events).
struct Curve {
  std::string label;
  std::string run;  // "a" | "b"
  std::string x;    // "events" | "allocated_bytes" | "seconds"
  std::vector<double> xs, ys;
};

// One allocator's replay of one trace in both folders.
struct AllocatorSide {
  double peakHeapBytes = 0, fragmentationPercent = 0, timeMs = 0;
  std::string status;  // "ok" or why not
};
struct AllocatorDiff {
  std::string trace, allocator;
  AllocatorSide a, b;
};

// Folders: one trace present in both, as a whole.
struct TraceDiff {
  std::string name;
  RunSummary a, b;  // path: the trace's path in that folder
};

struct DiffResult {
  RunSummary a, b;
  double peakGrowthPercent = 0;            // (B - A) / A * 100; 0 when A's peak is 0
  std::optional<double> thresholdPercent;  // --fail-if-peak-grows
  bool failed = false;
  std::vector<std::string> failures;  // one sentence each
  std::vector<SiteDiff> sites;        // by |peak-live change|, then |bytes change|
  bool sitesCompared = false;         // both runs carried sites
  std::vector<TraceDiff> traces;      // folders only
  std::vector<Curve> curves;
  std::vector<AllocatorDiff> allocators;  // folders only
  std::vector<std::string> notes;         // what was left out, and why
};

struct DiffOptions {
  bool allowDifferentPrograms = false;
  std::optional<double> thresholdPercent;
};

// The percentage by which `b` exceeds `a` (negative when it shrank); 0 when a is 0.
double growthPercent(double a, double b);

// Both computations throw support::Error naming the file when an input cannot be read, and
// when the two inputs are runs of programs with different names (unless allowed).
DiffResult diffTraces(const std::string& a, const std::string& b, const DiffOptions& options);
DiffResult diffFolders(const std::string& a, const std::string& b, const DiffOptions& options);

// Throws support::Error when the programs' base names differ (and both are known).
void checkSamePrograms(const std::string& programA, const std::string& programB,
                       const std::string& what, const DiffOptions& options);

// Sorts the sites (largest |peak-live change| first, then |bytes change|) and sets the
// peak growth; then, with a threshold, fills failures and failed.
void judge(DiffResult& result);

// How the text names things (diff_text.cpp): a byte count "1.5 MiB", a change "+512.0 KiB"
// / "-3 B", and a site as its innermost `frames` frames, "make_node (tree.c:12) <- main
// (main.c:40)", module+offset where unsymbolized.
std::string bytesText(double bytes);
std::string changeText(std::int64_t change);
std::string siteText(const SiteDiff& site, std::size_t frames);

// Renderers: the terminal table (the top `top` sites) and diff.json (at most `maxSites`,
// kJsonSites as the command writes it).
inline constexpr std::size_t kJsonSites = 500;
std::string renderText(const DiffResult& result, std::size_t top);
std::string renderJson(const DiffResult& result, std::size_t maxSites);

// The whole command: which kind A and B are, the model, DIR/diff.json, DIR/report.html (a
// failure to draw it becomes a note). Throws support::Error for unreadable or mixed inputs.
DiffResult runDiff(const std::string& a, const std::string& b, const DiffOptions& options,
                   const std::string& outDir);

}  // namespace strata::diff
