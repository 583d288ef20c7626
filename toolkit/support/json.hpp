// JSON text for the tools' --json outputs and results files.
#pragma once
#include <string>
#include <string_view>

namespace strata::support {

// A JSON string literal: quotes and backslashes escaped, newlines and tabs as \n and \t, other
// control characters as \u00XX; every other byte as it is (UTF-8 passes through).
std::string jsonString(std::string_view text);

// A JSON number with `digits` significant digits; null for NaN and infinities, which JSON
// cannot carry.
std::string jsonNumber(double value, int digits = 17);

}  // namespace strata::support
