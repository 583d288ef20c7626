// The CSV files a result document names (replay curves, live RSS, tune's candidates, drag's
// curves): a header line of column names, values below it: numbers, or in a column whose
// first value is not a number, text (no quoting: a value holds no comma). Read whole, then downsampled for
// the page with every column's extremes kept, and written as the bundle's CSV object
// (docs/toolkit/json.md, "What report.html embeds").
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "support/json_value.hpp"

namespace strata::report {

struct CsvTable {
  std::vector<std::string> columns;
  // One entry per column, one value per row (empty for a text column).
  std::vector<std::vector<double>> values;
  std::vector<bool> textColumn;  // one per column
  // The file's text and where each row starts in it: a value reaches the page as it was
  // written (an integer byte count stays exact), read again only for the rows kept.
  std::string source;
  std::vector<std::size_t> rowStart;
  std::size_t rows() const { return rowStart.size(); }
  // The text of column `column` of row `row`.
  std::string_view text(std::size_t row, std::size_t column) const;
};

// Parses CSV text; `name` is the file's name for errors. Throws support::Error naming the file
// and line of a malformed row ("FILE: line 7: expected 4 values, found 3").
CsvTable parseCsv(std::string text, const std::string& name);

// The rows kept when a table of `rows` rows is drawn with at most `limit`: all of them when
// it has no more; otherwise the rows cut into buckets, and from each its first and last rows
// and the rows holding every column's minimum and maximum, each row once, in order.
std::vector<std::size_t> keptRows(const CsvTable& table, std::size_t limit);

// The bundle's CSV object: {"csv": true, "columns": [...], "data": [[...], ...], "rows": N,
// "downsampled_from": N}, with at most `limit` rows.
support::JsonValue csvBundle(const CsvTable& table, std::size_t limit = 4000);

}  // namespace strata::report
