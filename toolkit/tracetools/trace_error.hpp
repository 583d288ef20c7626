// Where the trace format's errors become the toolkit's. The reader (strata/trace/reader.hpp)
// reports a bad trace as a value, trace::TraceError, or throws trace::TraceFormatError from
// readTrace: its headers are installed for programs that read traces themselves and know
// nothing of toolkit/support. The toolkit's analyses throw support::Error naming the file.
#pragma once
#include <string>

#include "support/error.hpp"
#include "strata/trace/reader.hpp"

namespace strata::tracetools {

// "PATH: WHAT at byte offset N: DETAIL", the reader's message after the file it read.
inline support::Error traceError(const std::string& path, const trace::TraceError& error) {
  return support::Error(path + ": " + error.message());
}

}  // namespace strata::tracetools
