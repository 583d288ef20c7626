// `strata tune`'s command line: the option table (tune_options.cpp) and what is parsed with
// it. The help around the options is tune.cpp's.
#pragma once
#include <span>
#include <string>
#include <vector>

#include "support/options.hpp"
#include "tune/tune_run.hpp"

namespace strata::cli::tune_options {

// The options, bound to `o`.
std::vector<support::Option> optionTable(tune::TuneOptions& o);

// The arguments as tune::TuneOptions, checked (traces or a command, not both) and with the default
// search spaces when none are named. Throws UsageError.
tune::TuneOptions parseTuneOptions(std::span<char* const> args);

// The options part of the help.
std::string optionsHelp();

}  // namespace strata::cli::tune_options
