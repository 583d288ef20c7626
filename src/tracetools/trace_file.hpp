// TraceFile: a trace being written to a file, for the tools that make traces (the workload
// generators, mtrace import): TraceWriter<FdSink> with a 1 MiB chunk buffer, and errors turned
// into exceptions that name the file.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "strata/trace/writer.hpp"

namespace strata::tracetools {

class TraceFile {
 public:
  // Creates (or truncates) `path` and writes the file header. Throws std::runtime_error
  // "PATH: cannot create: REASON" when it cannot.
  explicit TraceFile(const std::string& path);
  ~TraceFile();
  TraceFile(const TraceFile&) = delete;
  TraceFile& operator=(const TraceFile&) = delete;

  // Appends one event; returns the id of the object it created, or trace::kNoObject. Throws
  // std::runtime_error naming the file when the write fails, std::logic_error for an event the
  // writer rejects (a caller bug: ids not yet created, bad flags).
  std::uint64_t append(const trace::Event& e);
  // Writes the trailer and closes the file; throws std::runtime_error when that fails.
  void finish();

  std::uint64_t events() const { return writer_.events(); }
  std::uint64_t objects() const { return writer_.objects(); }
  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void fail() const;

  std::string path_;
  int fd_;
  std::vector<unsigned char> buffer_;
  trace::TraceWriter<trace::FdSink> writer_;
};

}  // namespace strata::tracetools
