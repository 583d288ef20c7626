// Formatting shared by compare's report files (compare_report.cpp and
// compare_command_report.cpp) and `strata stats`'s table: the figures as support/format.hpp
// prints them, under the names the report code uses.
#pragma once
#include "support/format.hpp"

namespace strata::compare::reportfmt {

using support::decimalsFor;
using support::format;
using support::grouped;
using support::kMiB;
using support::pad;
using support::threeDigits;

}  // namespace strata::compare::reportfmt
