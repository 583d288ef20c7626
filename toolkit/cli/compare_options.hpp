// `strata compare`'s command line: the option table (compare_options.cpp) and what is parsed
// with it. The help around the options is compare.cpp's.
#pragma once
#include <span>
#include <string>
#include <vector>

#include "compare/compare_run.hpp"
#include "support/options.hpp"

namespace strata::cli::compare_options {

// The options, bound to `o`; `allocatorsGiven` is set when --allocators is given.
std::vector<support::Option> optionTable(compare::Options& o, bool& allocatorsGiven);

// The arguments as compare::Options, checked and completed (completeOptions). Throws UsageError.
compare::Options parseCompareOptions(std::span<char* const> args);

// The options part of the help.
std::string optionsHelp();

}  // namespace strata::cli::compare_options
