// The last-use file of `strata drag` (include/strata/drag/protocol.h): for each object the
// trace event after which the program last touched it and the event that ended it, as the
// drag tool wrote them. A file cut short (a run killed outright) is read up to its last whole
// record and flagged incomplete; a malformed one is an error naming the byte offset at fault.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace strata::tracetools {

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
  std::vector<LastUseRecord> records;  // sorted by id, one per id
  bool complete = false;               // the file ends with its trailer
  std::string incomplete;              // why not complete, for a warning; empty when complete

  // The record of object `id`, or null when the file has none. Binary search: the records
  // are kept sorted by id rather than in a table indexed by id, so memory follows the file's
  // size and not the largest id a damaged file may name.
  const LastUseRecord* find(std::uint64_t id) const;
};

// A malformed last-use file: what is wrong and the byte offset it concerns.
class LastUseError : public std::runtime_error {
 public:
  LastUseError(std::uint64_t offset, const std::string& what)
      : std::runtime_error(what + " at byte offset " + std::to_string(offset)), offset_(offset) {}
  std::uint64_t offset() const noexcept { return offset_; }

 private:
  std::uint64_t offset_;
};

// Reads a last-use file from memory. Throws LastUseError for a bad magic or version, a header
// cut short, a trailer whose count disagrees with the records or with bytes after it, a last
// use after the release, or an id with two records.
LastUseData parseLastUse(const unsigned char* data, std::size_t size);

// The same from a file, read in blocks. Errors are std::runtime_error "PATH: WHAT at byte
// offset N" (LastUseError, with the path in front) or "PATH: cannot read: REASON".
LastUseData readLastUseFile(const std::string& path);

}  // namespace strata::tracetools
