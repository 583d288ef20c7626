// The trace files of a recorded command, shared by `strata record`, `strata compare` and
// `strata drag`: the recorder writes FILE for the command's process and FILE.<pid> for every
// other process, each opening with a program chunk naming the process.
#pragma once
#include <string>
#include <vector>

#include "strata/trace/names.hpp"

namespace strata::tracetools {

// The <trace>.<pid> files and their pids: the recorder's naming, said once (record/).
using trace::childTraces;
using trace::pidSuffix;

// The process a trace names in its program chunk: its program, pid and parent pid. For a
// trace without one (version 1) the pid is the file name's suffix; fields are empty or 0 when
// the trace cannot be read.
struct TraceProgram {
  std::string path;
  long pid = 0;
  long parentPid = 0;
};
TraceProgram readTraceProgram(const std::string& trace);

}  // namespace strata::tracetools
