// The traces a comparison or a settings search runs on (`strata compare`, `strata tune`): the
// bundled workloads generated, trace files given, or a command recorded with the recorder. A
// recorded command (or a trace file with <file>.<pid> traces of other processes beside it)
// gives one trace per process; the ones that allocated too little to judge are left out
// unless asked for. Each trace comes with its statistics, written beside the results.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "support/notes.hpp"
#include "tracetools/trace_stats.hpp"

namespace strata::tracetools {

// What to gather: `traces` or `command` or neither (the bundled workloads).
struct InputRequest {
  std::vector<std::string> traces;
  std::vector<std::string> command;    // recorded into outDir/<program>.trace
  std::vector<std::string> processes;  // program names (basenames) to keep; empty: by size
  std::string outDir;                  // where the statistics (and recordings) go
  double size = 1;                     // the bundled workloads' size and seed
  std::uint64_t seed = 1;
  bool sites = false;          // record and report allocation sites
  bool allProcesses = false;   // keep processes that allocated too little to judge
  bool liveOnly = false;       // a command run only live: nothing is recorded
  bool programStdoutToFile = false;  // the recorded program's stdout into a file, not ours
  std::string who;             // "strata compare": the name the notes start with
};

// A process allocated too little to judge when it allocated less than this in total (unless
// it is the largest of its command, or allProcesses or processes names it).
inline constexpr std::uint64_t kTrivialBytes = 1u << 20;

// One trace to run on.
struct InputTrace {
  std::string name;         // file stem, used in output file names
  std::string path;         // the trace file
  std::string description;  // the bundled workload's line, or what was recorded
  std::string statsFile;    // <name>-stats.json, relative to the output directory
  std::string sitesFile;    // with sites: <name>-sites.json (strata-sites-1), relative; else empty
  TraceStats stats;
  std::string sitesTable;   // with sites: the top sites live at the trace's peak
  std::string program;      // the process's program path (empty when not known)
  long pid = 0;             // the process (0 when not known)
  long parentPid = 0;
};

struct Inputs {
  std::string source;       // "workloads", "traces" or "command"
  std::string intro;        // a phrase for the opening line ("3 traces")
  std::string commandLine;  // the command, shell-quoted (a command only)
  std::vector<std::string> skippedProcesses;  // "python3 (pid 1234): no allocations"
  std::vector<InputTrace> traces;             // empty for a command run only live
};

// Before anything runs: a command that cannot be started (support::Error, status 2) or a
// trace that cannot be read (status 1) is an error.
void checkInputs(const std::vector<std::string>& command, const std::vector<std::string>& traces);

// Gathers the traces, computes their statistics and writes <name>-stats.json (and with sites
// <name>-sites.json) into outDir. Tells `notes` what it does that takes time (recording,
// generating). Throws support::Error with a message for the user.
Inputs gatherInputs(const InputRequest& request, const support::Notes& notes);

}  // namespace strata::tracetools
