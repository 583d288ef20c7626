// The last-use file of `strata drag` (toolkit/protocol/include/strata/protocol/drag.h): for each object the
// trace event after which the program last touched it and the event that ended it, as the
// drag tool wrote them. A file cut short (a run killed outright) is read up to its last whole
// record and flagged incomplete; a malformed one is an error naming the byte offset at fault.
// The records are not kept: reading checks the file and keeps its header and status, and
// forEachLastUseRecord reads the records again, in file order, for each pass that needs them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "support/error.hpp"

namespace strata::drag {

// One object's record. Seqs count every event of the trace from 0; release is
// kLastUseAtExit for an object still live when the program ended.
struct LastUseRecord {
  std::uint64_t id = 0;
  std::uint64_t lastUse = 0;  // the object was last accessed after this event
  std::uint64_t release = 0;  // the event that ended it, or kLastUseAtExit
  std::uint64_t offset = 0;   // where the record starts in the file
};
inline constexpr std::uint64_t kLastUseAtExit = 0xFFFFFFFFFFFFFFFEull;  // STRATA_DRAG_AT_EXIT

struct LastUseData {
  std::uint64_t pid = 0;               // the program's pid as Valgrind saw it
  std::uint64_t recordCount = 0;       // whole records in the file
  bool complete = false;               // the file ends with its trailer
  std::string incomplete;              // why not complete, for a warning; empty when complete
  std::string path;                    // the file (readLastUseFile), or empty
  std::vector<unsigned char> bytes;    // the file itself (parseLastUse), or empty
};

// A malformed last-use file: what is wrong and the byte offset it concerns.
class LastUseError : public support::Error {
 public:
  LastUseError(std::uint64_t offset, const std::string& what)
      : support::Error(what + " at byte offset " + std::to_string(offset)), offset_(offset) {}
  std::uint64_t offset() const noexcept { return offset_; }

 private:
  std::uint64_t offset_;
};

// Reads a last-use file from memory (keeping a copy of it). Throws LastUseError for a bad
// magic or version, a header cut short, a trailer whose count disagrees with the records or
// with bytes after it, or a last use after the release. An id with two records is found by
// the analysis (drag_analysis.hpp), which sorts the records by id.
LastUseData parseLastUse(const unsigned char* data, std::size_t size);

// The same from a file, read in blocks. Errors are support::Error "PATH: WHAT at byte
// offset N" (LastUseError, with the path in front) or "PATH: cannot read: REASON".
LastUseData readLastUseFile(const std::string& path);

// Calls f with each whole record of `data`'s file, in file order, reading it again in blocks;
// errors as the call that made `data` (the file may have changed since).
void forEachLastUseRecord(const LastUseData& data,
                          const std::function<void(const LastUseRecord&)>& f);

// "PATH: WHAT" for an error about `data`'s file, or WHAT when it was read from memory.
std::string lastUseError(const LastUseData& data, const std::string& what);

}  // namespace strata::drag
