// Helpers shared by the trace-tools tests: traces built by hand from event lists and read
// back (the scratch directory and slurp come from tests/common/process.hpp).
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/process.hpp"
#include "strata/trace/reader.hpp"
#include "strata/trace/writer.hpp"

namespace tttest {

namespace fs = std::filesystem;
using strata::trace::Event;
using strata::trace::kNoObject;
using strata::trace::Op;

using strata::test::slurp;
using strata::test::TempDir;

// One event, with the fields an op uses (the writer ignores the rest).
inline Event ev(Op op, std::uint64_t size = 0, std::uint64_t target = kNoObject,
                std::uint64_t object = kNoObject, std::uint8_t flags = 0, std::uint32_t thread = 0,
                std::uint64_t timeNs = 0) {
  Event e;
  e.op = op;
  e.size = size;
  e.target = target;
  e.object = object;
  e.flags = flags;
  e.thread = thread;
  e.timeNs = timeNs;
  return e;
}

// The bytes of a trace holding `events` (with a trailer when `trailer`).
inline std::vector<unsigned char> encode(const std::vector<Event>& events, bool trailer = true) {
  std::vector<unsigned char> out;
  std::vector<unsigned char> buf(4096);
  auto sink = [&out](const unsigned char* d, std::size_t n) {
    out.insert(out.end(), d, d + n);
    return true;
  };
  strata::trace::TraceWriter<decltype(sink)> w(buf.data(), buf.size(), sink);
  for (const Event& e : events)
    if (w.append(e) == strata::trace::TraceWriter<decltype(sink)>::kRejected) ADD_FAILURE() << "writer rejected an event";
  if (trailer) w.finish();
  else w.flush();
  return out;
}

inline void writeFile(const std::string& path, const std::vector<unsigned char>& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
}

// Every event of the trace file at `path` (throws TraceFormatError for a bad one).
inline std::vector<Event> readEvents(const std::string& path) {
  const std::string bytes = slurp(path);
  return strata::trace::readTrace(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

inline bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace tttest
