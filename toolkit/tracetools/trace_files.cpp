// The trace files of a recorded command (trace_files.hpp).
#include "tracetools/trace_files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include "strata/trace/reader.hpp"

namespace strata::tracetools {

TraceProgram readTraceProgram(const std::string& trace) {
  TraceProgram p;
  const int fd = ::open(trace.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    strata::trace::TraceReader<strata::trace::FdSource> reader(strata::trace::FdSource{fd});
    strata::trace::Event e;
    reader.next(e);  // reads the header and the program chunk
    p.path = reader.program().path;
    p.pid = static_cast<long>(reader.program().pid);
    p.parentPid = static_cast<long>(reader.program().parentPid);
    ::close(fd);
  }
  if (p.pid == 0) p.pid = pidSuffix(trace);
  return p;
}

}  // namespace strata::tracetools
