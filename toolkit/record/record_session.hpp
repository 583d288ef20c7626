// `strata record`'s work, outside the recorder itself (which runs inside the recorded program
// and is libstrata-record.so): finding the recorder, the environment that drives it
// (strata/protocol/recorder_environment.hpp), running the command under it through the one launcher
// (support::runChild), and finding and reading back the traces the run wrote. The command
// (toolkit/cli/record.cpp) parses the arguments and renders what this returns.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "support/process.hpp"

namespace strata::record {

// How the recorder records (docs/toolkit/recording.md); each empty or false leaves the recorder's
// default, or what the caller's environment says.
struct RecordSettings {
  std::string clock;     // env::kClockTsc, kClockFine or kClockCoarse
  std::string touchMin;  // a number of bytes, or env::kTouchOff
  bool touchAll = false;
  bool sites = false;
  bool drag = false;     // tell the drag tool where objects live (`strata drag`)
  bool plain = false;    // plain event chunks (format version 2), not compressed ones
};

// The NAME=VALUE entries that make the recorder write `file` as `settings` say.
std::vector<std::string> recorderEnvironment(const std::string& file,
                                             const RecordSettings& settings);

// The recorder library to preload. Throws support::Error (exit status 2) when it is not
// built, or when its path cannot go into LD_PRELOAD.
std::string recorderLibrary();

// `path` made absolute against the current directory, so the program may chdir.
std::string absolutePath(const std::string& path);

struct RecordRequest {
  std::vector<std::string> command;  // COMMAND ARGS...
  std::string file;                  // the trace file; relative to the current directory
  RecordSettings settings;
  std::string stdoutPath;            // the program's stdout into this file; empty: its own
};

// A trace the run wrote, and the pid of the process that wrote it (0 for FILE itself).
struct RecordedTrace {
  std::string path;
  long pid = 0;
};

struct RecordResult {
  std::string file;                    // the trace file, absolute
  support::ProcessResult process;      // how the command ended (it started)
  std::vector<RecordedTrace> traces;   // FILE when written, then FILE.<pid> in pid order
  bool fileWritten() const { return !traces.empty() && traces.front().pid == 0; }
};

// Runs the command with the recorder preloaded, its stdio and the terminal's signals its
// own, and waits for it. Throws support::Error: the recorder missing (exit status 2), FILE
// not writable (1), COMMAND not found (127) or not executable (126).
RecordResult recordCommand(const RecordRequest& request);

// One trace read back to its end: what the summary line of `strata record` says.
struct TraceSummary {
  std::string error;  // why it could not be read; the rest is empty then
  std::uint64_t events = 0, objects = 0, threads = 0, bytes = 0;
  bool hasSites = false;
  std::uint64_t sites = 0, modules = 0;
  bool complete = false;  // has its trailer
};
TraceSummary summariseTrace(const std::string& path);

// What `strata record` says after a run, a line each (without its "strata record: "):
// how the command ended when not plainly and whether FILE was written (`name`: the command)...
std::vector<std::string> runLines(const RecordResult& result, const std::string& name);
// ... and each trace read back ("FILE: 12 events, 3 objects, ... complete"), or why it does
// not read; with many processes FILE and the first ten others, the rest counted.
std::vector<std::string> summaryLines(const RecordResult& result);

}  // namespace strata::record
