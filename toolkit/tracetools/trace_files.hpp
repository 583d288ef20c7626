// The trace files of a recorded command, shared by `strata record`, `strata compare` and
// `strata drag`: the recorder writes FILE for the command's process and FILE.<pid> for every
// other process, each opening with a program chunk naming the process.
#pragma once
#include <string>
#include <vector>

namespace strata::cli {

// The traces the recorder wrote beside `trace` for other processes: the <trace>.<pid> files,
// in pid order.
std::vector<std::string> childTraces(const std::string& trace);

// The pid at the end of "<trace>.<pid>", or 0.
long pidSuffix(const std::string& path);

// The process a trace names in its program chunk: its program, pid and parent pid. For a
// trace without one (version 1) the pid is the file name's suffix; fields are empty or 0 when
// the trace cannot be read.
struct TraceProgram {
  std::string path;
  long pid = 0;
  long parentPid = 0;
};
TraceProgram readTraceProgram(const std::string& trace);

}  // namespace strata::cli
