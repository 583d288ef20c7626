// What record_test's files share: `strata record` run by /bin/sh in a test's directory, and
// the trace it wrote read back.
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/process.hpp"
#include "strata/trace/reader.hpp"

namespace strata::test::record {

inline const std::string kStrata = STRATA_CLI_PATH;

// A word for /bin/sh, single-quoted.
inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// What a command did: its exit status (128+N for signal N, as a shell reports it), stdout
// and stderr.
struct Result {
  int status = -1;
  std::string out, err;
};

// Runs a shell command line in dir, capturing its output there.
inline Result run(const TempDir& dir, const std::string& commandLine) {
  const std::string out = dir / "stdout.txt", err = dir / "stderr.txt";
  const std::string line = "cd " + quote(dir.path().string()) + " && " + commandLine + " > " +
                           quote(out) + " 2> " + quote(err);
  const int w = std::system(line.c_str());
  Result r;
  r.status = WIFEXITED(w) ? WEXITSTATUS(w) : 128 + WTERMSIG(w);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// `strata record ARGS` (ARGS already shell words).
inline Result record(const TempDir& dir, const std::string& args) {
  return run(dir, quote(kStrata) + " record " + args);
}

// Every event of a trace file; fails the test (by exception) when it does not read.
inline std::vector<trace::Event> readEvents(const std::string& path, bool* complete) {
  const std::string bytes = slurp(path);
  return trace::readTrace(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
                          complete);
}

// A trace's events and its program chunk.
struct TraceFile {
  std::vector<trace::Event> events;
  trace::ProgramInfo program;
  bool complete = false;
};

// The trace at path, read to its end (a read error fails the test).
inline TraceFile readTraceFile(const std::string& path) {
  const std::string bytes = slurp(path);
  trace::TraceReader<trace::MemorySource> reader(trace::MemorySource{
      reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()});
  TraceFile t;
  trace::Event e;
  trace::ReadStatus st;
  while ((st = reader.next(e)) == trace::ReadStatus::Event) t.events.push_back(e);
  EXPECT_EQ(st, trace::ReadStatus::End) << path << ": " << reader.error().message();
  t.program = reader.program();
  t.complete = reader.complete();
  return t;
}

constexpr std::uint64_t kPage = 4096;
constexpr std::uint64_t kKiB = 1024, kMiB = 1024 * kKiB;

// The index of the first event creating an object of `size` bytes with op, or -1.
inline long findCreate(const std::vector<trace::Event>& ev, trace::Op op, std::uint64_t size,
                       std::size_t from = 0) {
  for (std::size_t i = from; i < ev.size(); ++i)
    if (ev[i].op == op && ev[i].size == size && !(ev[i].flags & trace::kFlagFailed))
      return static_cast<long>(i);
  return -1;
}

// The name GoogleTest gives a case of a table: the case's own.
struct CaseName {
  template <class Case>
  std::string operator()(const testing::TestParamInfo<Case>& info) const {
    return info.param.name;
  }
};

}  // namespace strata::test::record
