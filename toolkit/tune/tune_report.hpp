// What `strata tune` prints and writes: per allocator the default and the best setting for the
// goal with time and peak heap as ratios to that default and to glibc's default, the gain
// against its noise, the command lines to use it; the Pareto front of time against peak heap
// over every setting tried (candidates.csv, drawn by tune_plot.py); the live check; tune.json
// (tune_json.cpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tune/tune_search.hpp"

namespace strata::tune {

// The command run live on an allocator's default and on its best setting.
struct LiveCheck {
  std::string allocator;
  bool ok = false;
  std::string detail;  // why not, when !ok
  double defaultSeconds = 0, bestSeconds = 0;
  std::uint64_t defaultRss = 0, bestRss = 0;
};

struct TuneReport {
  SearchSettings settings;
  std::string intro;        // what was tuned on, for the opening line
  std::string budgetText;   // "300 replays", "120 s"
  std::string appLine;      // the command the lines to use run: the user's, or ./app
  std::string spacesPath;
  Measure glibc;            // glibc's default: the common reference (ok=false if not measured)
  std::vector<AllocatorRun> runs;
  std::vector<std::string> skipped;  // allocators not searched, and why
  std::vector<LiveCheck> live;
};

// The opening lines.
std::string formatIntro(const TuneReport& r);
// One allocator's block.
std::string formatRun(const TuneReport& r, const AllocatorRun& run);
// The Pareto front over every allocator and setting, and the overall recommendation.
std::string formatFront(const TuneReport& r);
// The live check: the predicted and the live gain side by side.
std::string formatLive(const TuneReport& r);
// Every setting tried, one CSV line each, with its ratios to glibc's default and whether it
// is on the Pareto front (tune_plot.py draws it).
std::string candidatesCsv(const TuneReport& r);
// Everything as one JSON document, tune.json (tune_json.cpp): "format": "strata-tune-1",
// the settings, "app" (the command the lines run), "candidates_file" ("candidates.csv"), and
// per allocator every candidate with its measure, "environment_line" and "strata_run_line".
std::string tuneJson(const TuneReport& r);

// The ways to run the app on a candidate: "GLIBC_TUNABLES=... ./app" (environment form) and
// "strata run --allocator '...' -- ./app".
std::string environmentLine(const AllocatorRun& run, const Candidate& c, const std::string& app);
std::string strataRunLine(const Candidate& c, const std::string& app);

}  // namespace strata::tune
