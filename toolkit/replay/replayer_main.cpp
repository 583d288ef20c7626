// strata-replayer: runs one replay in its own process, so that the allocator under test is
// whatever LD_PRELOAD put in it and a crash cannot take `strata` down. runReplay() starts it;
// it is not meant to be run by hand, but can be:
//
//   strata-replayer --trace FILE --result OUT [--series CSV] [--allocator none|system]
//                   [--threads N] [--heap-limit BYTES] [--no-write] [--verify]
//                   [--window EVENTS] [--baseline BYTES]
//   strata-replayer --measure-baseline
//
// --measure-baseline prints the heap baseline (measure.hpp: anonymous resident memory at the
// start of main minus glibc's [heap]) and exits; run with no LD_PRELOAD, it is the process
// without any allocator, which a replay's heap is measured from (--baseline). Without
// --baseline the replayer measures it itself by running itself with --measure-baseline and
// LD_PRELOAD removed; when that fails, the heap is measured from the start of the replay.
//
// It writes the result (key=value lines, result_file.hpp) to OUT and the heap/live series to
// CSV, and exits 0 whenever it could write OUT (the status inside says how the replay went,
// "trace-error" for an unreadable trace), 2 for bad arguments, 1 when OUT cannot be written.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "replay/engine.hpp"
#include "replay/measure.hpp"
#include "replay/result_file.hpp"

namespace {

// Parses a decimal unsigned number; false when it is not one.
bool parseNumber(const char* s, std::uint64_t& out) {
  if (s == nullptr || *s < '0' || *s > '9') return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s, &end, 10);
  if (errno != 0 || *end != '\0') return false;
  out = v;
  return true;
}

// Reports a bad invocation; exit status 2.
int usage(const std::string& why) {
  std::fprintf(stderr,
               "strata-replayer: %s\nusage: strata-replayer --trace FILE --result OUT [--series CSV] "
               "[--allocator none|system] [--threads N] [--heap-limit BYTES] [--no-write] "
               "[--verify] [--window EVENTS] [--baseline BYTES]\n"
               "       strata-replayer --measure-baseline\n",
               why.c_str());
  return 2;
}

}  // namespace

// Parses the arguments, replays, writes the result files.
int main(int argc, char** argv) {
  using namespace strata::replay;
  if (argc == 2 && std::strcmp(argv[1], "--measure-baseline") == 0) {
    // First, before this process allocates anything of its own.
    const std::uint64_t baseline = startBaselineBytes();
    std::printf("%llu\n", static_cast<unsigned long long>(baseline));
    return 0;
  }
  EngineOptions opt;
  std::string tracePath, resultPath, seriesPath;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const char* next = i + 1 < argc ? argv[i + 1] : nullptr;
    std::uint64_t n = 0;
    if (a == "--trace" && next) {
      tracePath = argv[++i];
    } else if (a == "--result" && next) {
      resultPath = argv[++i];
    } else if (a == "--series" && next) {
      seriesPath = argv[++i];
    } else if (a == "--allocator" && next) {
      const std::string_view v = argv[++i];
      if (v == "none") opt.allocator = EngineAllocator::None;
      else if (v == "system") opt.allocator = EngineAllocator::System;
      else return usage("--allocator takes none or system");
    } else if (a == "--threads" && next) {
      if (!parseNumber(argv[++i], n) || n > kMaxReplayThreads)
        return usage("--threads takes 0.." + std::to_string(kMaxReplayThreads));
      opt.threads = static_cast<unsigned>(n);
    } else if (a == "--heap-limit" && next) {
      if (!parseNumber(argv[++i], n)) return usage("--heap-limit takes a number of bytes");
      opt.heapLimit = n;
    } else if (a == "--window" && next) {
      if (!parseNumber(argv[++i], n) || n == 0) return usage("--window takes a number of events");
      opt.windowEvents = n;
    } else if (a == "--baseline" && next) {
      if (!parseNumber(argv[++i], n)) return usage("--baseline takes a number of bytes");
      opt.baselineBytes = n;
    } else if (a == "--no-write") {
      opt.writeObjects = false;
    } else if (a == "--verify") {
      opt.verify = true;
    } else {
      return usage("unknown or incomplete argument '" + std::string(a) + "'");
    }
  }
  if (tracePath.empty() || resultPath.empty()) return usage("--trace and --result are required");
  opt.collectSeries = !seriesPath.empty();
  if (!opt.baselineBytes) {
    const ChildBaseline b = baselineFromChild("/proc/self/exe");
    opt.baselineBytes = b.bytes;
    if (!b.bytes)
      std::fprintf(stderr, "strata-replayer: %s; measuring the heap from the replay's start\n",
                   b.whyNot.c_str());
  }

  const ReplayResult r = replayFile(tracePath, opt);
  if (!seriesPath.empty() && !writeTextFile(seriesPath, seriesCsv(r.series))) {
    std::fprintf(stderr, "strata-replayer: cannot write %s: %s\n", seriesPath.c_str(),
                 std::strerror(errno));
    return 1;
  }
  if (!writeTextFile(resultPath, toKeyValues(r))) {
    std::fprintf(stderr, "strata-replayer: cannot write %s: %s\n", resultPath.c_str(),
                 std::strerror(errno));
    return 1;
  }
  return 0;
}
