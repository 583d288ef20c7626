// heaptrack import on bad input: every malformed or out-of-range line is an error naming the
// file and line; raw recordings, newer file versions and empty files are refused with what to
// do; truncated and corrupt zstd and gzip data are errors, never a crash or a hang.
#include <sstream>

#include "support/error.hpp"
#include "tracetools/heaptrack.hpp"
#include "test_util.hpp"

namespace {

using namespace tttest;
namespace tt = strata::tracetools;

const std::string kData = STRATA_HEAPTRACK_DATA;

// Imports `bytes` (plain, zstd or gzip); the error message, or "" when it imports.
std::string importError(const std::string& bytes) {
  TempDir dir;
  std::istringstream in(bytes);
  try {
    tt::importHeaptrack(in, "in.ht", dir / "out.trace");
  } catch (const strata::support::Error& e) {
    return e.what();
  }
  return "";
}

const std::string kHeader = "v 10400 3\nX ./prog\ns 4 main\ni 1000 0 1\nt 1 0\na 10 1\na 20 1\n";

TEST(HeaptrackInput, TheHeaderAloneImports) { EXPECT_EQ(importError(kHeader), ""); }

TEST(HeaptrackInput, MalformedLinesAreReportedWithTheirNumber) {
  const std::pair<std::string, std::string> cases[] = {
      {"+ 2", "in.ht:8: malformed heaptrack line: allocation info index 2 is not defined yet (2 so far): '+ 2'"},
      {"- 7", "in.ht:8: malformed heaptrack line: allocation info index 7"},
      {"Q 1", "in.ht:8: malformed heaptrack line: unknown line type 'Q'"},
      {"Q1", "unknown line type 'Q'"},
      {"+1", "in.ht:8: malformed heaptrack line: expected a space after the line type"},
      {"t 9 0", "instruction pointer index 9 is not defined yet (1 so far)"},
      {"t 1 5", "parent trace index 5"},
      {"a 1 7", "trace index 7"},
      {"i 10 9", "module string index 9"},
      {"i 10 0 1 9 2", "file string index 9"},
      {"i 10 0 1 1", "'i' takes 2, 3 or 2 + 3k numbers, got 4"},
      {"s 5 abc", "the string's length is 3 bytes, not 5"},
      {"s abc", "'s' takes a hex length"},
      {"+ zz", "bad hex number 'zz'"},
      {"+ 11111111111111111", "bad hex number"},  // 17 digits
      {"+", "'+' takes 1 number, got 0"},
      {"- 1 2", "'-' takes 1 number, got 2"},
      {"a 10", "'a' takes 2 numbers, got 1"},
      {"c fffffffffffffff", "time stamp out of range"},
      {"v 10600 4", "file version 4 is newer than this importer reads"},
      {std::string("\x01\x02", 2), "unknown line type '\\x01'"},
      {std::string("\0 1", 3), "unknown line type '\\x00'"},
  };
  for (const auto& [line, want] : cases) {
    const std::string got = importError(kHeader + line + "\n");
    EXPECT_TRUE(contains(got, want)) << "line '" << line << "': " << got;
    EXPECT_TRUE(contains(got, "in.ht:8: ")) << "line '" << line << "': " << got;
  }
}

TEST(HeaptrackInput, ALineCutShortIsReportedAtTheEnd) {
  // A recording whose writer died mid-line: the last line has no newline and too little.
  const std::string cut = importError(kHeader + "+ 0\n+ 0\ns 9 make_n");
  EXPECT_TRUE(contains(cut, "in.ht:10: malformed heaptrack line: the string's length")) << cut;
  EXPECT_EQ(importError(kHeader + "+ 0\n- 0"), "");  // a whole last line without its newline
}

TEST(HeaptrackInput, RawRecordingsAreRefusedWithHowToInterpretThem) {
  const std::string raw = "v 10400 3\nx 12 /tmp/heaptrack_x\nX ./prog\nm 1 -\n";
  const std::string got = importError(raw);
  EXPECT_TRUE(contains(got, "in.ht:2: a raw heaptrack recording")) << got;
  EXPECT_TRUE(contains(got, "heaptrack_interpret")) << got;
}

TEST(HeaptrackInput, EmptyInputIsNotARecording) {
  EXPECT_TRUE(contains(importError(""), "in.ht: empty: not a heaptrack recording"));
}

TEST(HeaptrackInput, OverlongLinesAreRefusedNotKept) {
  const std::string got = importError("v 10400 3\nX " + std::string(5u << 20, 'a'));
  EXPECT_TRUE(contains(got, "a line longer than 4 MiB")) << got.substr(0, 200);
}

TEST(HeaptrackInput, TruncatedAndCorruptCompressedFilesAreErrors) {
  for (const std::string name : {"heaptrack_program.zst", "heaptrack_program.gz"}) {
    const std::string kind = name.substr(name.size() - 3) == "zst" ? "zstd" : "gzip";
    const std::string bytes = slurp(kData + "/" + name);
    ASSERT_GT(bytes.size(), 100u) << name;
    ASSERT_EQ(importError(bytes), "") << name;
    for (const std::size_t keep : {bytes.size() / 2, bytes.size() - 1}) {
      const std::string cut = importError(bytes.substr(0, keep));
      EXPECT_TRUE(contains(cut, "in.ht: the " + kind + " stream ends early after")) << name << ": " << cut;
    }
    // Flipped bits in the middle: the checksum or the decoder catches them.
    std::string bad = bytes;
    for (std::size_t i = bytes.size() / 2; i < bytes.size() / 2 + 4; ++i)
      bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    const std::string err = importError(bad);
    EXPECT_TRUE(contains(err, "in.ht:")) << name << ": " << err;
    EXPECT_TRUE(contains(err, "corrupt " + kind + " data") || contains(err, "malformed heaptrack line"))
        << name << ": " << err;
  }
}

TEST(HeaptrackInput, AMissingFileNamesIt) {
  TempDir dir;
  try {
    tt::importHeaptrack(dir / "none.zst", dir / "out.trace");
    ADD_FAILURE() << "imported a missing file";
  } catch (const strata::support::Error& e) {
    EXPECT_TRUE(contains(e.what(), "none.zst: cannot open: No such file")) << e.what();
  }
}

}  // namespace
