// Conversion between Strata traces and glibc's mtrace text (MALLOC_TRACE), for
// `strata import --from mtrace` and `strata export --to mtrace`.
//
// The mtrace format, as glibc 2.36 writes it (libc_malloc_debug.so.0, after the program calls
// mtrace()): "= Start" and "= End" lines around event lines, each event line optionally
// prefixed by its caller ("@ ./prog:[0x119d] " or "@ ./prog:(fn+0x12)[0x...] "):
//   + ADDR SIZE     malloc, calloc, memalign, realloc(NULL, n) (ADDR "(nil)": it failed)
//   - ADDR          free, and realloc(p, 0)
//   < OLD           realloc moving OLD ...
//   > NEW SIZE      ... to NEW (always right after its "<" line)
//   ! OLD SIZE      realloc that failed (OLD stays live)
// ADDR is "%p" (0x... or "(nil)"), SIZE "%#lx" (0x... or 0). free(NULL) writes nothing.
#pragma once
#include <cstdint>
#include <istream>
#include <string>

#include "tracetools/trace_file.hpp"


namespace strata::tracetools {

// What an import did.
struct MtraceImportResult {
  std::uint64_t lines = 0;             // lines read
  std::uint64_t events = 0;            // events written to the trace
  std::uint64_t objects = 0;           // objects created
  std::uint64_t unknownFrees = 0;      // "-" of an address not live: counted and skipped
  std::uint64_t unknownReallocs = 0;   // realloc of an address not live: imported as realloc(NULL, n)
  std::uint64_t reusedAddresses = 0;   // "+" of an address already live (its free was not traced)
};

// Reads mtrace text from `in` (named `inName` in messages) and writes it as a Strata trace
// to `outPath`: addresses become dense object ids, every event is on thread 0 at time 0 (mtrace
// has neither), a "<"/">" pair becomes one realloc event. Throws support::Error
// "INNAME:LINE: ..." for a malformed line and "OUTPATH: ..." when the trace cannot be written.
MtraceImportResult importMtrace(std::istream& in, const std::string& inName,
                                const std::string& outPath,
                                ChunkCompression compression = ChunkCompression::Yes);
// The same, reading the file at `inPath`.
MtraceImportResult importMtrace(const std::string& inPath, const std::string& outPath,
                                ChunkCompression compression = ChunkCompression::Yes);

// What an export did.
struct MtraceExportResult {
  std::uint64_t events = 0;  // trace events read
  std::uint64_t lines = 0;   // mtrace event lines written (without "= Start" / "= End")
};

// Writes the trace at `tracePath` as mtrace text to `outPath`, with synthesised addresses
// (unique over the whole run, aligned as requested). Every allocating op becomes "+", every
// free "-"; reap_malloc is "+", reap_free "-", and reap_clear / reap_destroy write a "-" for
// every live object of the reap and of the reaps under it. Threads and times are lost.
// Throws support::Error naming the file (and byte offset, for a corrupt trace).
MtraceExportResult exportMtrace(const std::string& tracePath, const std::string& outPath);

}  // namespace strata::tracetools
