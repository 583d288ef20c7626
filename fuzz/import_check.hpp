// The importer fuzz targets' one check (mtrace_fuzz.cpp, heaptrack_fuzz.cpp): run an importer
// on the input, writing its trace to a memfd; it must either import or throw
// std::runtime_error with a message, and what it imported must read back as a valid trace.
#pragma once
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

#include "tracetools/trace_stats.hpp"

namespace strata::fuzz {

// importer(std::istream&, const std::string& outPath) imports or throws.
template <class Importer>
void checkImport(const std::uint8_t* data, std::size_t size, Importer importer) {
  const int fd = ::memfd_create("out", MFD_CLOEXEC);
  if (fd < 0) return;
  const std::string out = "/proc/self/fd/" + std::to_string(fd);
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  bool imported = false;
  try {
    importer(in, out);
    imported = true;
  } catch (const std::runtime_error& e) {
    if (std::string(e.what()).empty()) __builtin_trap();
  }
  if (imported) {
    try {
      const strata::tracetools::TraceStats stats = strata::tracetools::computeStats(out);
      (void)stats;
    } catch (const std::runtime_error&) {
      __builtin_trap();
    }
  }
  ::close(fd);
}

}  // namespace strata::fuzz
