// The CSV files of a result folder (csv_table.hpp): strict parsing, and downsampling that
// keeps every column's extremes so no peak is lost on the page.
#include "report/csv_table.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "support/error.hpp"

namespace strata::report {
namespace {

// The JSON number grammar: a CSV value the page gets as it was written.
bool isJsonNumber(std::string_view s) {
  std::size_t i = 0;
  const auto digitsFrom = [&](std::size_t& at) {
    const std::size_t start = at;
    while (at < s.size() && s[at] >= '0' && s[at] <= '9') ++at;
    return at > start;
  };
  if (i < s.size() && s[i] == '-') ++i;
  if (i < s.size() && s[i] == '0') {
    ++i;
  } else if (!digitsFrom(i)) {
    return false;
  }
  if (i < s.size() && s[i] == '.' && !digitsFrom(++i)) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digitsFrom(i)) return false;
  }
  return i == s.size();
}

std::vector<std::string_view> splitFields(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = line.find(',', start);
    fields.push_back(line.substr(start, comma == std::string_view::npos ? line.npos : comma - start));
    if (comma == std::string_view::npos) return fields;
    start = comma + 1;
  }
}

void addRow(CsvTable& t, std::string_view line, std::size_t lineNo, const std::string& name) {
  const std::vector<std::string_view> fields = splitFields(line);
  const auto where = [&] { return name + ": line " + std::to_string(lineNo) + ": "; };
  if (fields.size() != t.columns.size())
    throw support::Error(where() + "expected " + std::to_string(t.columns.size()) +
                         " values, found " + std::to_string(fields.size()));
  const bool firstRow = t.rowStart.empty();
  for (std::size_t c = 0; c < fields.size(); ++c) {
    const std::string_view f = fields[c];
    double v = 0;
    const auto [end, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
    const bool number =
        isJsonNumber(f) && ec == std::errc() && end == f.data() + f.size() && std::isfinite(v);
    // A column is text (an allocator's name, a setting) when its first value is not a number;
    // a number column stays one.
    if (firstRow && !number) t.textColumn[c] = true;
    if (t.textColumn[c]) continue;
    if (!number)
      throw support::Error(where() + "'" + std::string(f) + "' in column " + t.columns[c] +
                           " is not a number");
    t.values[c].push_back(v);
  }
  t.rowStart.push_back(static_cast<std::size_t>(line.data() - t.source.data()));
}

}  // namespace

std::string_view CsvTable::text(std::size_t row, std::size_t column) const {
  std::string_view line(source);
  line.remove_prefix(rowStart[row]);
  line = line.substr(0, line.find('\n'));
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  for (std::size_t c = 0; c < column; ++c) line.remove_prefix(line.find(',') + 1);
  return line.substr(0, line.find(','));
}

CsvTable parseCsv(std::string source, const std::string& name) {
  CsvTable t;
  t.source = std::move(source);
  const std::string_view text(t.source);
  std::size_t lineNo = 0, pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++lineNo;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (lineNo == 1) {
      for (const std::string_view col : splitFields(line)) {
        if (col.empty()) throw support::Error(name + ": line 1: an empty column name in the header");
        t.columns.emplace_back(col);
      }
      t.values.resize(t.columns.size());
      t.textColumn.assign(t.columns.size(), false);
      continue;
    }
    if (line.empty() && pos >= text.size()) break;  // the final newline
    addRow(t, line, lineNo, name);
  }
  if (t.columns.empty()) throw support::Error(name + ": is empty (a CSV file needs a header line)");
  return t;
}

std::vector<std::size_t> keptRows(const CsvTable& table, std::size_t limit) {
  const std::size_t rows = table.rows();
  std::vector<std::size_t> kept;
  if (rows <= limit) {
    kept.resize(rows);
    for (std::size_t r = 0; r < rows; ++r) kept[r] = r;
    return kept;
  }
  // Each bucket keeps at most 2 + 2 * columns rows, so the result stays within the limit.
  const std::size_t perBucket = 2 + 2 * table.columns.size();
  const std::size_t buckets = std::max<std::size_t>(1, limit / perBucket);
  const std::size_t size = (rows + buckets - 1) / buckets;
  std::vector<std::size_t> chosen;
  for (std::size_t begin = 0; begin < rows; begin += size) {
    const std::size_t end = std::min(rows, begin + size);
    chosen.clear();
    chosen.push_back(begin);
    chosen.push_back(end - 1);
    for (const std::vector<double>& col : table.values) {
      if (col.empty()) continue;  // a text column
      const auto first = col.begin() + static_cast<std::ptrdiff_t>(begin);
      const auto last = col.begin() + static_cast<std::ptrdiff_t>(end);
      const auto [lo, hi] = std::minmax_element(first, last);
      chosen.push_back(static_cast<std::size_t>(lo - col.begin()));
      chosen.push_back(static_cast<std::size_t>(hi - col.begin()));
    }
    std::sort(chosen.begin(), chosen.end());
    chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
    kept.insert(kept.end(), chosen.begin(), chosen.end());
  }
  return kept;
}

support::JsonValue csvBundle(const CsvTable& table, std::size_t limit) {
  using support::JsonValue;
  const std::vector<std::size_t> kept = keptRows(table, limit);
  JsonValue columns = JsonValue::makeArray();
  JsonValue data = JsonValue::makeArray();
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    columns.push(JsonValue::makeString(table.columns[c]));
    std::vector<JsonValue> values;
    values.reserve(kept.size());
    for (const std::size_t r : kept) {
      std::string text(table.text(r, c));
      values.push_back(table.textColumn[c] ? JsonValue::makeString(std::move(text))
                                           : JsonValue::makeNumberText(std::move(text)));
    }
    data.push(JsonValue::makeArray(std::move(values)));
  }
  return JsonValue::makeObject({{"csv", JsonValue::makeBool(true)},
                                {"columns", std::move(columns)},
                                {"data", std::move(data)},
                                {"rows", JsonValue::makeNumber(static_cast<double>(kept.size()))},
                                {"downsampled_from",
                                 JsonValue::makeNumber(static_cast<double>(table.rows()))}});
}

}  // namespace strata::report
