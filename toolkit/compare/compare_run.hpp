// `strata compare` from its options to its results: the allocators and inputs checked before
// anything runs, then the steps of compare_steps.hpp in order, with report.txt and
// results.json rewritten after every trace so an interrupted comparison leaves what it
// measured. The command (toolkit/cli/compare.cpp) parses, calls these and renders.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "compare/compare_steps.hpp"

namespace strata::compare {

// The allocators to compare, resolved: where each one's library is, and how many are there.
struct Allocators {
  std::vector<registry::ResolvedAllocator> where;
  std::size_t available = 0;
};

// Every spec parsed, with a label of its own, resolved and (when its library is there)
// probed: it preloads and takes over malloc. Throws support::Error with exit status 2.
Allocators resolveAllocators(const std::vector<std::string>& specs);

// Checks what the options say together (trace files or a command, not both; --live-only
// with a command, without --no-live or --sites) and completes them: every allocator the
// registry knows when none were named, a name given twice compared once. Throws
// support::UsageError.
void completeOptions(Options& o, bool allocatorsGiven);

// What a comparison found.
struct Comparison {
  CompareSettings settings;
  std::vector<TraceReport> traces;
  CommandReport command;
  bool commandBlock = false;  // the command as a whole is judged (and in results.json)
  bool anyFailed = false;     // a replay or a live run failed
  const CommandReport* commandOut() const { return commandBlock ? &command : nullptr; }
};

// What gathering the traces needs of the options (tracetools/trace_inputs.hpp).
tracetools::InputRequest inputRequest(const Options& o);

// Gathers the traces, replays each on every allocator, runs the command live, and judges the
// command as a whole. `show` is given each block of report text as it is ready (the opening
// lines, each trace's table, the command's block); `notes`, the lines on what is being done
// (recording, generating). Throws support::Error.
Comparison runComparison(const Options& o, const Allocators& allocators,
                         const std::function<void(const std::string&)>& show,
                         const support::Notes& notes);

}  // namespace strata::compare
