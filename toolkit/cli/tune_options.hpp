// `strata tune`'s command line: the option table (tune_options.cpp) and what is parsed with
// it. The help around the options is tune.cpp's.
#pragma once
#include <span>
#include <string>
#include <vector>

#include "options.hpp"
#include "tune_run.hpp"

namespace strata::cli::tune {

// The options, bound to `o`.
std::vector<support::Option> optionTable(TuneOptions& o);

// The arguments as TuneOptions, checked (traces or a command, not both) and with the default
// search spaces when none are named. Throws UsageError.
TuneOptions parseTuneOptions(std::span<char* const> args);

// The options part of the help.
std::string optionsHelp();

}  // namespace strata::cli::tune
