// Import of heaptrack recordings (`strata import --from heaptrack`): the heaptrack.NAME.PID.zst
// (or .gz, or plain) file heaptrack 1.4 writes becomes a Strata trace with allocation sites.
// The line format is in heaptrack_line.hpp; what is exact and what is reconstructed is in
// docs/toolkit/import.md. In short: every '+' is a malloc of its allocation info's size, every '-' a
// free of the oldest live object of its allocation info (heaptrack records which info, not
// which object), all on thread 0, at the time of the last 'c' line (milliseconds); each
// heaptrack trace is one site (up to 64 frames, innermost first, heaptrack's instruction
// pointers + 1: return addresses, as recorded traces have), and the modules are placed from
// their ELF symbols (heaptrack_modules.hpp).
#pragma once
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "tracetools/trace_file.hpp"


namespace strata::tracetools {

struct HeaptrackImportResult {
  std::uint64_t lines = 0;          // lines read
  std::uint64_t events = 0;         // events written
  std::uint64_t objects = 0;        // objects created
  std::uint64_t sites = 0;          // sites defined
  std::uint64_t modules = 0;        // modules written
  std::uint64_t unknownFrees = 0;   // '-' with no live object of its info: counted and skipped
  std::uint64_t ambiguousFrees = 0; // '-' whose info had more than one live object
  bool attached = false;            // heaptrack attached to a running process ('A')
  unsigned fileVersion = 0;
  std::vector<std::string> warnings;  // modules that could not be placed
};

// Reads a heaptrack recording from `in` (zstd, gzip or plain text; named `inName` in
// messages) and writes it as a Strata trace to `outPath`. Throws support::Error
// "INNAME:LINE: ..." for a malformed line, an index out of range, a file version above 3 or a
// raw recording (`heaptrack --raw`), "INNAME: ..." for corrupt compressed data or an empty
// input, and "OUTPATH: ..." when the trace cannot be written.
HeaptrackImportResult importHeaptrack(std::istream& in, const std::string& inName,
                                      const std::string& outPath,
                                      ChunkCompression compression = ChunkCompression::Yes);
// The same, reading the file at `inPath`.
HeaptrackImportResult importHeaptrack(const std::string& inPath, const std::string& outPath,
                                      ChunkCompression compression = ChunkCompression::Yes);

}  // namespace strata::tracetools
