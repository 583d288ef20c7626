// Why a trace could not be read: the error value TraceReader returns (reader.hpp) and the
// exception readTrace throws. A value first, so that a reader can run where exceptions cannot
// (a replayer under the allocator it measures); the message names the byte offset at fault.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace strata::trace {

// Why a trace could not be read.
enum class ErrorKind : std::uint8_t {
  None,
  TruncatedHeader,   // the file is shorter than its 16-byte header
  BadMagic,          // the file does not start with "STRATATR"
  BadVersion,        // a format version this reader does not know
  BadFileFlags,      // header flags or reserved bytes not zero
  TruncatedChunk,    // the file ends inside a chunk header or payload
  BadChunkMagic,     // a chunk header with an unknown magic
  ChunkTooLarge,     // payload length over kMaxChunkPayload
  CrcMismatch,       // the payload does not match its CRC-32
  BadEvent,          // a CRC-valid payload that does not decode (bad op, flags, id, count)
  Discontinuity,     // a chunk's base object id does not follow the previous chunk
  BadTrailer,        // trailer malformed or its totals disagree with the events read
  DataAfterTrailer,  // bytes after the trailer chunk
  ReadFailed,        // the source reported an I/O error
  BadSites,          // a CRC-valid sites or modules chunk that does not decode
  BadCompression,    // a CRC-valid compressed chunk that does not decompress to its length
};

inline const char* errorKindName(ErrorKind k) noexcept {
  switch (k) {
    case ErrorKind::None: return "no error";
    case ErrorKind::TruncatedHeader: return "truncated file header";
    case ErrorKind::BadMagic: return "not a Strata trace (bad magic)";
    case ErrorKind::BadVersion: return "unsupported format version";
    case ErrorKind::BadFileFlags: return "unknown file flags";
    case ErrorKind::TruncatedChunk: return "truncated chunk";
    case ErrorKind::BadChunkMagic: return "bad chunk magic";
    case ErrorKind::ChunkTooLarge: return "chunk too large";
    case ErrorKind::CrcMismatch: return "chunk CRC mismatch";
    case ErrorKind::BadEvent: return "malformed event";
    case ErrorKind::Discontinuity: return "chunk does not follow the previous one";
    case ErrorKind::BadTrailer: return "bad trailer";
    case ErrorKind::DataAfterTrailer: return "data after trailer";
    case ErrorKind::ReadFailed: return "read error";
    case ErrorKind::BadSites: return "malformed sites or modules chunk";
    case ErrorKind::BadCompression: return "malformed compressed chunk";
  }
  return "unknown error";
}

// An error value: what went wrong and the file offset of the header or chunk it concerns.
struct TraceError {
  ErrorKind kind = ErrorKind::None;
  std::uint64_t offset = 0;
  std::string detail;
  // "chunk CRC mismatch at byte offset 4096: ..." (the caller prefixes the file name).
  std::string message() const {
    std::string m = errorKindName(kind);
    m += " at byte offset " + std::to_string(offset);
    if (!detail.empty()) m += ": " + detail;
    return m;
  }
};

// The same, as an exception, for callers that prefer one (readTrace below throws it).
class TraceFormatError : public std::runtime_error {
 public:
  explicit TraceFormatError(TraceError e) : std::runtime_error(e.message()), error_(std::move(e)) {}
  const TraceError& error() const noexcept { return error_; }
  ErrorKind kind() const noexcept { return error_.kind; }
  std::uint64_t offset() const noexcept { return error_.offset; }

 private:
  TraceError error_;
};

}  // namespace strata::trace
