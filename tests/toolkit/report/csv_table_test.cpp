// The CSV files of a result folder (toolkit/report/csv_table.hpp): strict parsing with errors
// naming the file and line, and downsampling that keeps each bucket's first, last, minimum
// and maximum rows, so the peak of every column reaches the page.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "report/csv_table.hpp"
#include "support/error.hpp"

namespace {

using strata::report::CsvTable;
using strata::report::csvBundle;
using strata::report::keptRows;
using strata::report::parseCsv;

std::string errorOf(const std::string& text) {
  try {
    parseCsv(text, "run/series.csv");
  } catch (const strata::support::Error& e) {
    return e.what();
  }
  return "(no error)";
}

// A curve like a replay's: `rows` rows of seconds, event, heap_bytes, live_bytes, the heap
// wobbling with one sharp peak of one row at `peakRow` and one dip at `dipRow`.
std::string curve(std::size_t rows, std::size_t peakRow, std::size_t dipRow) {
  std::string text = "seconds,event,heap_bytes,live_bytes\n";
  for (std::size_t r = 0; r < rows; ++r) {
    std::uint64_t heap = 1000000 + (r * 7919) % 5000;
    if (r == peakRow) heap = 9007199254740993ull;  // 2^53 + 1: only exact as text
    if (r == dipRow) heap = 3;
    text += std::to_string(static_cast<double>(r) / 1000.0) + "," + std::to_string(r * 1024) +
            "," + std::to_string(heap) + "," + std::to_string(heap / 2) + "\n";
  }
  return text;
}

TEST(Csv, ParsesHeaderAndColumns) {
  const CsvTable t = parseCsv("seconds,rss_bytes\r\n0.5,100\r\n1,2e3\r\n", "x.csv");
  ASSERT_EQ(t.columns, (std::vector<std::string>{"seconds", "rss_bytes"}));
  ASSERT_EQ(t.rows(), 2u);
  EXPECT_DOUBLE_EQ(t.values[0][0], 0.5);
  EXPECT_DOUBLE_EQ(t.values[1][1], 2000.0);
  EXPECT_EQ(t.text(1, 1), "2e3");
  EXPECT_EQ(t.text(0, 0), "0.5");
  EXPECT_EQ(parseCsv("a,b\n", "h.csv").rows(), 0u);
}

TEST(Csv, MalformedRowsNameTheFileAndLine) {
  EXPECT_EQ(errorOf("a,b\n1,2\n3\n"), "run/series.csv: line 3: expected 2 values, found 1");
  EXPECT_EQ(errorOf("a,b\n1,2\n4,x\n"), "run/series.csv: line 3: 'x' in column b is not a number");
  EXPECT_EQ(errorOf("a,b\n1,2,3\n"), "run/series.csv: line 2: expected 2 values, found 3");
  EXPECT_EQ(errorOf("a,b\n\n1,2\n"), "run/series.csv: line 2: expected 2 values, found 1");
  EXPECT_EQ(errorOf("a,b\n1,2\n1,nan\n"), "run/series.csv: line 3: 'nan' in column b is not a number");
  EXPECT_EQ(errorOf("a,b\n1,2\n1, 2\n"), "run/series.csv: line 3: ' 2' in column b is not a number");
  EXPECT_EQ(errorOf(""), "run/series.csv: is empty (a CSV file needs a header line)");
  EXPECT_EQ(errorOf("a,,b\n"), "run/series.csv: line 1: an empty column name in the header");
}

TEST(Csv, TextColumnsAreKeptAsStrings) {
  // tune's candidates: an allocator and a setting beside the figures.
  const CsvTable t = parseCsv("allocator,setting,time_seconds\nglibc,default,0.5\njemalloc,narenas:1;tcache:false,2\n",
                              "candidates.csv");
  ASSERT_EQ(t.rows(), 2u);
  EXPECT_EQ(t.textColumn, (std::vector<bool>{true, true, false}));
  const strata::support::JsonValue b = csvBundle(t);
  EXPECT_EQ(b["data"].items()[0].items()[1].string(), "jemalloc");
  EXPECT_EQ(b["data"].items()[1].items()[1].string(), "narenas:1;tcache:false");
  EXPECT_EQ(b["data"].items()[2].items()[1].numberText(), "2");
  // A number column stays one.
  EXPECT_EQ(errorOf("a,b\nx,1\ny,z\n"), "run/series.csv: line 3: 'z' in column b is not a number");
}

TEST(Csv, SmallTablesAreUntouched) {
  const CsvTable t = parseCsv(curve(4000, 10, 20), "s.csv");
  const std::vector<std::size_t> kept = keptRows(t, 4000);
  ASSERT_EQ(kept.size(), 4000u);
  for (std::size_t r = 0; r < kept.size(); ++r) ASSERT_EQ(kept[r], r);
  const strata::support::JsonValue b = csvBundle(t);
  EXPECT_EQ(b["rows"].unsignedNumber(), 4000u);
  EXPECT_EQ(b["downsampled_from"].unsignedNumber(), 4000u);
  EXPECT_EQ(b["data"].items()[2].items()[10].numberText(), "9007199254740993");
}

TEST(Csv, DownsamplingKeepsEveryPeakAndBothEnds) {
  constexpr std::size_t kRows = 100001, kPeak = 61234, kDip = 777;
  const CsvTable t = parseCsv(curve(kRows, kPeak, kDip), "s.csv");
  const std::vector<std::size_t> kept = keptRows(t, 4000);
  ASSERT_LE(kept.size(), 4000u);
  ASSERT_GT(kept.size(), 1000u);
  EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end()));
  EXPECT_EQ(std::adjacent_find(kept.begin(), kept.end()), kept.end()) << "a row kept twice";
  EXPECT_EQ(kept.front(), 0u);
  EXPECT_EQ(kept.back(), kRows - 1);
  EXPECT_TRUE(std::binary_search(kept.begin(), kept.end(), kPeak));
  EXPECT_TRUE(std::binary_search(kept.begin(), kept.end(), kDip));

  // Through the bundle: the largest heap and live values are the file's, exactly.
  const strata::support::JsonValue b = csvBundle(t);
  EXPECT_EQ(b["rows"].unsignedNumber(), kept.size());
  EXPECT_EQ(b["downsampled_from"].unsignedNumber(), kRows);
  ASSERT_EQ(b["columns"].items().size(), 4u);
  for (std::size_t c = 0; c < 4; ++c) {
    const auto& col = b["data"].items()[c].items();
    ASSERT_EQ(col.size(), kept.size());
    std::uint64_t largest = 0, smallest = UINT64_MAX;
    for (const auto& v : col) {
      largest = std::max(largest, v.unsignedNumber());
      smallest = std::min(smallest, v.unsignedNumber());
    }
    const auto [lo, hi] = std::minmax_element(t.values[c].begin(), t.values[c].end());
    EXPECT_EQ(static_cast<double>(largest), std::floor(*hi)) << t.columns[c];
    EXPECT_EQ(static_cast<double>(smallest), std::floor(*lo)) << t.columns[c];
  }
  EXPECT_EQ(b["data"].items()[2].items()[static_cast<std::size_t>(
                std::find(kept.begin(), kept.end(), kPeak) - kept.begin())].numberText(),
            "9007199254740993");
}

TEST(Csv, EveryBucketsExtremesSurviveInAJaggedCurve) {
  // A saw tooth whose teeth peak at different rows: every tooth's top must stay.
  std::string text = "event,heap_bytes\n";
  constexpr std::size_t kRows = 50000, kTooth = 997;
  for (std::size_t r = 0; r < kRows; ++r)
    text += std::to_string(r) + "," + std::to_string(r % kTooth) + "\n";
  const CsvTable t = parseCsv(text, "saw.csv");
  const std::vector<std::size_t> kept = keptRows(t, 4000);
  ASSERT_LE(kept.size(), 4000u);
  for (std::size_t top = kTooth - 1; top < kRows; top += kTooth)
    EXPECT_TRUE(std::binary_search(kept.begin(), kept.end(), top)) << "tooth top at " << top;
}

}  // namespace
