// libFuzzer target: every public read path of a trace on arbitrary bytes: the streaming
// TraceReader over memory (events, program chunk, sites and modules, error with its offset),
// readTrace (which throws TraceFormatError), and the statistics of `strata stats` with the
// figures by site (computeStats, which reads a file: the bytes are handed to it through a
// memfd). Symbolization is left out: it opens the files a trace names and runs addr2line. None may crash, hang or leak; an error is
// an answer.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "strata/trace/reader.hpp"
#include "tracetools/trace_stats.hpp"

namespace {

// The bytes as a file computeStats can open (/proc/self/fd/N of a memfd); -1 when no memfd.
int asFile(const std::uint8_t* data, std::size_t size) {
  const int fd = ::memfd_create("trace", MFD_CLOEXEC);
  if (fd < 0) return -1;
  std::size_t done = 0;
  while (done < size) {
    const ssize_t w = ::write(fd, data + done, size - done);
    if (w <= 0) {
      ::close(fd);
      return -1;
    }
    done += static_cast<std::size_t>(w);
  }
  return fd;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace strata::trace;
  {
    TraceReader<MemorySource> reader(MemorySource{data, size});
    Event e;
    ReadStatus s;
    std::uint64_t events = 0;
    while ((s = reader.next(e)) == ReadStatus::Event) {
      ++events;
      // Every site an event names is defined, with 1 to kMaxSiteDepth frames.
      const std::size_t depth = reader.sites().frames(e.site).size();
      if (e.site != kNoSite && (depth == 0 || depth > kMaxSiteDepth)) __builtin_trap();
    }
    for (std::size_t i = 0; i < reader.sites().moduleCount(); ++i) {
      const ModuleInfo m = reader.sites().module(i);
      if (m.end <= m.start || m.pathLength > kMaxModulePath) __builtin_trap();
    }
    if (s == ReadStatus::Error) {
      const std::string message = reader.error().message();
      if (message.empty()) __builtin_trap();  // an error must say what is wrong
    }
    (void)reader.program();
    (void)reader.complete();
  }
  try {
    bool complete = false;
    (void)readTrace(data, size, &complete);
  } catch (const TraceFormatError&) {
  }
  if (const int fd = asFile(data, size); fd >= 0) {
    try {
      strata::tracetools::SiteStats sites;
      (void)strata::tracetools::computeStats("/proc/self/fd/" + std::to_string(fd), &sites);
    } catch (const std::runtime_error&) {
    }
    ::close(fd);
  }
  return 0;
}
