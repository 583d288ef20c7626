// The last-use file reader (drag_last_use.hpp): whole files, files a killed run cut short,
// and malformed files, each error with the byte offset at fault; the records read again, in
// file order (a second record of an id is the analysis's to find: drag_analysis_test). Layout: a 24-byte header
// (magic, version, pid), 24-byte records (id, last use, release), a 24-byte trailer (END,
// count, 0); record k starts at byte 24 + 24k.
#include <algorithm>
#include <string>
#include <vector>

#include "support/error.hpp"
#include "drag/drag_last_use.hpp"
#include "drag_test_util.hpp"

namespace {

using namespace dragtest;

// The offset of the LastUseError `bytes` raise (and its message in *what), or ~0 when none.
std::uint64_t errorOffset(const std::vector<unsigned char>& bytes, std::string* what = nullptr) {
  try {
    (void)dg::parseLastUse(bytes.data(), bytes.size());
  } catch (const dg::LastUseError& e) {
    if (what != nullptr) *what = e.what();
    return e.offset();
  }
  return ~std::uint64_t{0};
}

// The records of d, read again, sorted by id.
std::vector<dg::LastUseRecord> recordsById(const dg::LastUseData& d) {
  std::vector<dg::LastUseRecord> out;
  dg::forEachLastUseRecord(d, [&out](const dg::LastUseRecord& r) { out.push_back(r); });
  std::sort(out.begin(), out.end(),
            [](const dg::LastUseRecord& a, const dg::LastUseRecord& b) { return a.id < b.id; });
  return out;
}

TEST(DragLastUse, AWholeFileIsReadAndItsRecordsReadAgain) {
  const dg::LastUseData d = lastUse({{7, 3, 9}, {2, 0, kAtExit}, {5, 4, 4}});
  EXPECT_TRUE(d.complete);
  EXPECT_TRUE(d.incomplete.empty());
  EXPECT_EQ(d.pid, 4242u);
  EXPECT_EQ(d.recordCount, 3u);
  const std::vector<dg::LastUseRecord> r = recordsById(d);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].id, 2u);
  EXPECT_EQ(r[0].release, dg::kLastUseAtExit);
  EXPECT_EQ(r[0].offset, 48u);  // the second record
  EXPECT_EQ(r[1].id, 5u);
  EXPECT_EQ(r[1].lastUse, 4u);  // a last use at the release itself is allowed
  EXPECT_EQ(r[2].id, 7u);
}

TEST(DragLastUse, AKilledRunKeepsItsWholeRecords) {
  // No trailer: both records kept, incomplete.
  dg::LastUseData d = lastUse({{0, 1, 2}, {1, 1, 3}}, /*trailer=*/false);
  EXPECT_FALSE(d.complete);
  EXPECT_EQ(recordsById(d).size(), 2u);
  EXPECT_NE(d.incomplete.find("no trailer after 2 records"), std::string::npos) << d.incomplete;

  // The third record cut after 10 of its 24 bytes (it would start at 24 + 48 = 72).
  std::vector<unsigned char> b = lastUseBytes({{0, 1, 2}, {1, 1, 3}, {2, 5, 6}}, false);
  b.resize(72 + 10);
  d = dg::parseLastUse(b.data(), b.size());
  EXPECT_FALSE(d.complete);
  EXPECT_EQ(d.recordCount, 2u);
  EXPECT_EQ(recordsById(d).size(), 2u);
  EXPECT_NE(d.incomplete.find("byte offset 72 after 2 whole records"), std::string::npos)
      << d.incomplete;

  // Only the header: no record, still a valid (empty, incomplete) file.
  b.resize(24);
  d = dg::parseLastUse(b.data(), b.size());
  EXPECT_FALSE(d.complete);
  EXPECT_TRUE(recordsById(d).empty());
}

TEST(DragLastUse, MalformedFilesNameTheOffset) {
  std::string what;
  std::vector<unsigned char> b = lastUseBytes({{0, 1, 2}, {1, 1, 3}});
  b[3] = 'x';  // "STRxTADG"
  EXPECT_EQ(errorOffset(b, &what), 0u);
  EXPECT_NE(what.find("bad magic"), std::string::npos) << what;

  b = lastUseBytes({{0, 1, 2}});
  b[8] = 2;  // version 2
  EXPECT_EQ(errorOffset(b, &what), 8u);
  EXPECT_NE(what.find("version 2"), std::string::npos) << what;

  b.resize(12);  // inside the header, what is there matches
  b[8] = 1;
  EXPECT_EQ(errorOffset(b, &what), 0u);
  EXPECT_NE(what.find("header"), std::string::npos) << what;
  b = {'E', 'L', 'F'};
  EXPECT_EQ(errorOffset(b, &what), 0u);
  EXPECT_NE(what.find("bad magic"), std::string::npos) << what;

  // Two records, trailer at 72: its count word at 80 says 3.
  b = lastUseBytes({{0, 1, 2}, {1, 1, 3}});
  b[80] = 3;
  EXPECT_EQ(errorOffset(b, &what), 80u);
  EXPECT_NE(what.find("counts 3 records, the file has 2"), std::string::npos) << what;
  b[80] = 2;
  b[88] = 1;  // its last word
  EXPECT_EQ(errorOffset(b, &what), 88u);
  b[88] = 0;
  b.push_back(0);  // a byte after the trailer (at 96)
  EXPECT_EQ(errorOffset(b, &what), 96u);
  EXPECT_NE(what.find("after the trailer"), std::string::npos) << what;

  // A last use after the release (record at 48).
  b = lastUseBytes({{0, 1, 2}, {1, 8, 3}});
  EXPECT_EQ(errorOffset(b, &what), 48u);
  EXPECT_NE(what.find("object 1: last use at event 8 after its release at event 3"),
            std::string::npos)
      << what;
}

TEST(DragLastUse, FilesAreNamedInErrors) {
  TempDir dir;
  std::vector<unsigned char> b = lastUseBytes({{0, 1, 2}});
  const std::string good = dir.write("good.lastuse", b).string();
  const dg::LastUseData d = dg::readLastUseFile(good);
  EXPECT_EQ(d.recordCount, 1u);
  EXPECT_EQ(recordsById(d).size(), 1u);  // read again from the file
  b[8] = 9;
  const std::string bad = dir.write("bad.lastuse", b).string();
  try {
    (void)dg::readLastUseFile(bad);
    ADD_FAILURE() << "no error";
  } catch (const strata::support::Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(bad + ": unsupported last-use file version 9", 0), 0u)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("at byte offset 8"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)dg::readLastUseFile(dir.path() / "missing"), strata::support::Error);
}

}  // namespace
