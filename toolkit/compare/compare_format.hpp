// Formatting shared by compare's report files (compare_report.cpp and
// compare_command_report.cpp) and `strata stats`'s table: the figures as support/format.hpp
// prints them, and JSON numbers and arrays.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "support/format.hpp"
#include "support/json.hpp"
#include "tracetools/trace_stats.hpp"

namespace strata::compare::reportfmt {

// The figures as every report prints them (support/format.hpp).
using support::decimalsFor;
using support::format;
using support::grouped;
using support::kMiB;
using support::pad;
using support::threeDigits;

// A JSON number; null for NaN and infinities, which JSON cannot carry.
inline std::string jsonNumber(double v) { return support::jsonNumber(v, 9); }

// A log2 histogram as a JSON array of counts.
inline std::string jsonCounts(const tracetools::Log2Histogram& h) {
  std::string s = "[";
  for (std::size_t i = 0; i < h.counts.size(); ++i) {
    if (i != 0) s += ",";
    s += std::to_string(h.counts[i]);
  }
  return s + "]";
}

// A list of seconds as a JSON array.
inline std::string jsonSeconds(const std::vector<double>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i != 0) s += ",";
    s += jsonNumber(v[i]);
  }
  return s + "]";
}


}  // namespace strata::compare::reportfmt
