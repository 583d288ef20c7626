// libFuzzer target: the heaptrack importer (`strata import --from heaptrack`) on arbitrary
// bytes, plain or zstd or gzip. It either imports or throws std::runtime_error saying where;
// it must never crash or hang. The trace it writes goes to a memfd; a successful import is
// read back and must be valid.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

#include "heaptrack.hpp"
#include "trace_stats.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const int fd = ::memfd_create("out", MFD_CLOEXEC);
  if (fd < 0) return 0;
  const std::string out = "/proc/self/fd/" + std::to_string(fd);
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  bool imported = false;
  try {
    (void)strata::tracetools::importHeaptrack(in, "input.ht", out);
    imported = true;
  } catch (const std::runtime_error& e) {
    if (std::string(e.what()).empty()) __builtin_trap();
  }
  if (imported) {
    // What the importer wrote must read back as a complete trace.
    try {
      const strata::tracetools::TraceStats stats = strata::tracetools::computeStats(out);
      (void)stats;
    } catch (const std::runtime_error&) {
      __builtin_trap();
    }
  }
  ::close(fd);
  return 0;
}
