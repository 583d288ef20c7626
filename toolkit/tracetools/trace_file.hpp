// TraceFile: a trace being written to a file, for the tools that make traces (the workload
// generators, mtrace and heaptrack import): TraceWriter<FdSink> with a 1 MiB chunk buffer (and,
// for a trace with allocation sites, a 1 MiB site buffer), its event chunks compressed with
// zstd unless told not to (format version 3; plain ones are version 2), and errors turned into
// exceptions that name the file.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "strata/trace/compression.hpp"
#include "strata/trace/writer.hpp"

namespace strata::tracetools {

// Whether a trace has allocation sites (docs/toolkit/trace-format.md, "Allocation sites").
enum class WithSites : bool { No, Yes };
// Whether its event chunks are compressed (trace-format.md, "Compressed event chunk").
enum class ChunkCompression : bool { No, Yes };

class TraceFile {
 public:
  // Creates (or truncates) `path` and writes the file header. Throws support::Error
  // "PATH: cannot create: REASON" when it cannot.
  explicit TraceFile(const std::string& path, WithSites sites = WithSites::No,
                     ChunkCompression compression = ChunkCompression::Yes);
  ~TraceFile();
  TraceFile(const TraceFile&) = delete;
  TraceFile& operator=(const TraceFile&) = delete;

  // Appends one event; returns the id of the object it created, or trace::kNoObject. Throws
  // support::Error naming the file when the write fails, std::logic_error for an event the
  // writer rejects (a caller bug: ids not yet created, bad flags).
  std::uint64_t append(const trace::Event& e);
  // Writes the program chunk (which process wrote the trace); only before anything else.
  // Returns false, writing nothing, when something was already written.
  bool program(const trace::ProgramInfo& program);
  // Defines a site from `depth` return addresses, innermost first (1 to trace::kMaxSiteDepth),
  // and returns its id (a trace with sites only; std::logic_error otherwise).
  std::uint64_t defineSite(const std::uint64_t* frames, std::size_t depth);
  // Writes the modules (a trace with sites only).
  void addModules(const std::vector<trace::ModuleInfo>& modules);
  // Writes the trailer and closes the file; throws support::Error when that fails.
  void finish();

  std::uint64_t events() const { return writer_.events(); }
  std::uint64_t objects() const { return writer_.objects(); }
  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void fail() const;
  // The writer's compressor: none when `compression` is No.
  trace::ChunkCompressor compressor(ChunkCompression compression);

  std::string path_;
  int fd_;
  std::vector<unsigned char> buffer_;
  std::vector<unsigned char> siteBuffer_;
  std::vector<std::uint64_t> zstdWorkspace_;  // 8-byte aligned, as zstd's static context wants
  std::vector<unsigned char> packed_;         // one compressed chunk
  std::unique_ptr<trace::ZstdCompressor> zstd_;
  trace::TraceWriter<trace::FdSink> writer_;
};

}  // namespace strata::tracetools
