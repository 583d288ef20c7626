// The series-file reader (diff_curve.hpp).
#include "diff/diff_curve.hpp"

#include "report/csv_table.hpp"
#include "support/error.hpp"
#include "support/files.hpp"

namespace strata::diff {
namespace {

std::size_t columnIndex(const report::CsvTable& table, const std::string& name,
                        const std::string& path) {
  for (std::size_t i = 0; i < table.columns.size(); ++i)
    if (table.columns[i] == name && !table.textColumn[i]) return i;
  throw support::Error(path + ": no column '" + name + "' of numbers in its header line");
}

}  // namespace

Curve csvCurve(const std::string& path, const std::string& xColumn, const std::string& yColumn) {
  const report::CsvTable table = report::parseCsv(support::readWholeFile(path), path);
  const std::size_t xi = columnIndex(table, xColumn, path), yi = columnIndex(table, yColumn, path);
  Curve c{.label = yColumn,
          .run = "",
          .x = xColumn == "event" ? "events" : xColumn,
          .xs = {},
          .ys = {}};
  for (const std::size_t row : report::keptRows(table, kCurvePoints)) {
    c.xs.push_back(table.values[xi][row]);
    c.ys.push_back(table.values[yi][row]);
  }
  return c;
}

}  // namespace strata::diff
