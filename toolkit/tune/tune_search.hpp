// The search of `strata tune`: for each allocator, its default and then settings from its
// space replayed on the traces, within a budget, in an order fixed by the seed; each setting
// replayed several times so its spread is known, and the best for a goal confirmed side by
// side with the default. tune.cpp runs it; tune_report.cpp prints it.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "registry/allocator_spec.hpp"
#include "tune/tune_spaces.hpp"

namespace strata::tune {

enum class Goal { Balanced, Time, Memory };
const char* goalName(Goal g);

// What one setting measured over every trace: each round's total replay time and total peak
// heap (summed over the traces), and their medians and spreads ((max - min) / median).
struct Measure {
  bool ok = false;
  std::string failure;  // when !ok: "crashed: the replay was killed by SIGSEGV ..."
  std::vector<double> seconds;
  std::vector<double> heapBytes;
  double time = 0, heap = 0;
  double timeSpread = 0, heapSpread = 0;
};

// One setting of one allocator (or a built composition) and what it measured.
struct Candidate {
  Setting setting;            // empty for a composition
  std::string description;    // "arena_max=2 top_pad=0", "default"
  std::string spec;           // for `strata run --allocator` and the replays
  std::vector<std::string> environment;  // NAME=VALUE the setting sets
  Measure measure;
  bool isDefault = false;
};

// The best setting for one goal and how it compares, side by side, with the default.
struct Verdict {
  int candidate = -1;        // index into candidates; -1: nothing beat the default
  double timeRatio = 1;      // confirmed: median over alternating rounds of best / default
  double heapRatio = 1;
  double timeNoise = 0;      // spread ((max - min) / median) of those rounds' ratios
  double heapNoise = 0;
  double goalNoise = 0;      // the same for the goal's score
  bool significant = false;  // the goal's gain is larger than its noise (and at least 1%)
};

struct AllocatorRun {
  std::string name;          // glibc, jemalloc, ... or a composition's label
  std::string version;
  std::string library;       // preloaded library; empty for glibc
  const Space* space = nullptr;  // nullptr for a composition
  std::vector<Candidate> candidates;  // [0] is the default
  Verdict verdict;
  std::uint64_t replays = 0;
  bool composition = false;
};

struct SearchSettings {
  std::vector<std::string> traces;
  unsigned repeat = 3;           // replays per setting
  std::uint64_t budgetReplays = 0;  // one of the two budgets is set
  double budgetSeconds = 0;
  std::uint64_t seed = 1;
  Goal goal = Goal::Balanced;
  unsigned threads = 0;          // replay threads, as `strata replay --threads`
};

// The median of `v` (0 when empty).
double median(std::vector<double> v);

// The score a goal minimises, from ratios to the default: time, peak heap, or their
// geometric mean.
double score(Goal goal, double timeRatio, double heapRatio);

// Searches one allocator's space (or, with no space, measures the one candidate given).
// `share` is this allocator's part of the budget (replays, or seconds when the budget is in
// seconds). `step` is called before each replay.
void searchAllocator(AllocatorRun& run, const registry::ResolvedAllocator& base,
                     const SearchSettings& settings, double share,
                     const std::function<void(const std::string&)>& step);

// Rounds of the confirmation: --repeat, but at least 5, so that its spread is known.
unsigned confirmationRounds(const SearchSettings& settings);

// Picks the candidate with the best score for the goal (from the search's medians) and
// measures it side by side with the default, alternating, confirmationRounds() each; fills
// run.verdict. Nothing to confirm when no candidate scored better than the default.
void confirmBest(AllocatorRun& run, const SearchSettings& settings,
                 const std::function<void(const std::string&)>& step);

// Measures one spec `rounds` times over the traces (used for glibc's default and for
// confirmation rounds).
Measure measureSpec(const std::string& spec, const SearchSettings& settings, unsigned rounds,
                    const std::function<void(const std::string&)>& step);

}  // namespace strata::tune
