// Compare's JSON (results.json, `strata compare --json`): how its parts are written into the
// one document resultsJson (compare_report.hpp) writes.
#pragma once
#include <vector>

#include "compare/compare_report.hpp"
#include "support/json_writer.hpp"

namespace strata::compare {

// The significant digits of every double in compare's JSON.
constexpr int kJsonDigits = 9;

// The member "command" of the object open in `w`: the processes compared and skipped, the
// combined verdict, the live runs and the agreement (compare_command_report.cpp).
void writeCommand(support::JsonWriter& w, const CommandReport& command,
                  const std::vector<TraceReport>& traces);

}  // namespace strata::compare
