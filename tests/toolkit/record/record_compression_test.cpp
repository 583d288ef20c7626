// `strata record` writes zstd-compressed event chunks (format version 3) unless told not to:
// --no-compress and STRATA_TRACE_PLAIN=1 give plain version 2 traces, and both forms hold the
// same program's events (record_threads_program: its allocations do not depend on timing).
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "record_run.hpp"
#include "strata/trace/format.hpp"

namespace {

#ifdef STRATA_RECORD_PRELOAD_TESTS

using strata::test::slurp;
using strata::test::TempDir;
using strata::trace::Event;
using namespace strata::test::record;

// The file's version and how many of its chunks are compressed event chunks.
struct Shape {
  std::uint16_t version = 0;
  std::size_t compressedChunks = 0;
};

Shape shapeOf(const std::string& path) {
  const std::string s = slurp(path);
  const auto* b = reinterpret_cast<const unsigned char*>(s.data());
  Shape shape;
  if (s.size() < strata::trace::kFileHeaderSize) return shape;
  shape.version = strata::trace::getU16(b + 8);
  for (std::size_t at = strata::trace::kFileHeaderSize;
       at + strata::trace::kChunkHeaderSize <= s.size();
       at += strata::trace::kChunkHeaderSize + strata::trace::getU32(b + at + 4))
    shape.compressedChunks += strata::trace::getU32(b + at) == strata::trace::kCompressedChunkMagic;
  return shape;
}

// What a trace's events count of each op and size: equal for two recordings of one program.
std::map<std::pair<int, std::uint64_t>, int> census(const std::vector<Event>& events) {
  std::map<std::pair<int, std::uint64_t>, int> c;
  for (const Event& e : events)
    if (e.size >= 1000) ++c[{static_cast<int>(e.op), e.size}];  // the program's own objects
  return c;
}

TEST(RecordCompression, CompressedByDefaultPlainWhenAsked) {
  TempDir dir;
  ASSERT_EQ(record(dir, "-o z.trace -- " + quote(RECORD_THREADS)).status, 0);
  ASSERT_EQ(record(dir, "--no-compress -o p.trace -- " + quote(RECORD_THREADS)).status, 0);
  ASSERT_EQ(run(dir, "STRATA_TRACE_PLAIN=1 " + quote(kStrata) + " record -o e.trace -- " +
                         quote(RECORD_THREADS)).status, 0);
  const Shape z = shapeOf(dir / "z.trace"), p = shapeOf(dir / "p.trace"),
              e = shapeOf(dir / "e.trace");
  EXPECT_EQ(z.version, strata::trace::kFormatVersion);
  EXPECT_GT(z.compressedChunks, 0u);
  EXPECT_EQ(p.version, strata::trace::kPlainFormatVersion);
  EXPECT_EQ(p.compressedChunks, 0u);
  EXPECT_EQ(e.version, strata::trace::kPlainFormatVersion);
  EXPECT_EQ(e.compressedChunks, 0u);
  const TraceFile zt = readTraceFile(dir / "z.trace"), pt = readTraceFile(dir / "p.trace");
  EXPECT_TRUE(zt.complete);
  EXPECT_TRUE(pt.complete);
  EXPECT_FALSE(census(zt.events).empty());
  EXPECT_EQ(census(zt.events), census(pt.events));
}

#endif

}  // namespace
