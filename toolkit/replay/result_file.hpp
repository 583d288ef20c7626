// How strata-replayer hands its result to the parent: a key=value text file (one field a
// line) and the heap/live series as CSV. Written by replayer_main.cpp, read by runReplay();
// implemented in replay_result.cpp beside the JSON, which lists the same figures.
#pragma once
#include <string>
#include <vector>

#include "replay/replay_result.hpp"

namespace strata::replay {

// The result (all but allocator, library and series) as "key=value\n" lines.
std::string toKeyValues(const ReplayResult& r);

// Parses what toKeyValues wrote into r; false when a line or a number is malformed.
bool fromKeyValues(const std::string& text, ReplayResult& r);

// The series as CSV with the header "seconds,event,heap_bytes,live_bytes".
std::string seriesCsv(const std::vector<ReplaySample>& series);

// Parses seriesCsv's output; false when malformed.
bool parseSeriesCsv(const std::string& text, std::vector<ReplaySample>& out);

// Writes text to path (whole file); false with errno set on failure.
bool writeTextFile(const std::string& path, const std::string& text);

// Reads a whole file; false when it cannot be read.
bool readTextFile(const std::string& path, std::string& text);

}  // namespace strata::replay
