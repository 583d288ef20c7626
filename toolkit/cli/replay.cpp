// `strata replay FILE --allocator SPEC [--json] [--threads N] [--heap-limit SIZE] [--no-write]
// [--series CSV]`: replays a trace against one allocator in a child process (runReplay) and
// prints what it measured, as a readable block or one JSON object.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include "allocator_registry.hpp"
#include "allocator_spec.hpp"
#include "command.hpp"
#include "options.hpp"
#include "replay_runner.hpp"

namespace strata::cli {
namespace {

constexpr std::string_view kHelp =
    "usage: strata replay FILE --allocator SPEC [--json] [--threads N] [--heap-limit SIZE]\n"
    "                     [--no-write] [--series CSV]\n"
    "\n"
    "Replays the allocation trace FILE (from `strata record`, `strata generate` or `strata\n"
    "import`) against the allocator SPEC, in a child process with its library preloaded,\n"
    "writing the bytes the program touched (calloc's zeroing is the allocator's), and reports\n"
    "the replay's wall and CPU time (and, with several threads, the time inside allocator\n"
    "calls), peak heap size (the allocator's start-up included), peak live bytes and\n"
    "fragmentation (peak heap / peak live - 1). Each recorded thread replays on a thread of its\n"
    "own, started and ended where the program's was when the trace records it, in its recorded\n"
    "order, waiting for objects other threads create. See docs/replay.md.\n"
    "\n"
    "  --allocator SPEC      glibc, jemalloc, mimalloc, tcmalloc, strata-kingsley, strata-lea,\n"
    "                        strata (`strata allocators`), a library path (./libmine.so), or\n"
    "                        none (a do-nothing allocator that measures the harness alone);\n"
    "                        settings follow as :NAME=VALUE, set in the replay's environment\n"
    "                        (jemalloc:MALLOC_CONF=narenas:1; `strata run --help` has more)\n"
    "  --json                print one JSON object instead of the table\n"
    "  --threads N           replay threads: 0 (default) the program's threads, started and\n"
    "                        ended as recorded (traces without thread events: one per\n"
    "                        recorded thread, at most 64); N a fixed pool of N; 1 the recorded\n"
    "                        total order on one thread\n"
    "  --heap-limit SIZE     stop with status heap-limit when the heap exceeds SIZE bytes\n"
    "                        (suffixes K, M, G, T: powers of 1024)\n"
    "  --no-write            do not write the objects' bytes\n"
    "  --series CSV          write the heap/live curve (seconds,event,heap_bytes,live_bytes)\n"
    "\n"
    "Exit status: 0 when the replay ran (status ok or heap-limit); 1 when it could not (bad\n"
    "trace, allocator not installed, replay crashed); 2 for a wrong invocation or a library\n"
    "that cannot be preloaded or does not take over malloc.\n";

// A wrong invocation: the reason and the usage (command.hpp); exit status 2.
int usageError(const std::string& why) { return cli::usageError("replay", kHelp, why); }

// "12.3 MiB" for a byte count.
std::string humanBytes(std::uint64_t n) {
  static const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[48];
  if (u == 0) std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(n));
  else std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

// Prints the readable block.
void printResult(const std::string& file, const replay::ReplayResult& r) {
  std::printf("trace               %s\n", file.c_str());
  std::printf("allocator           %s%s%s%s\n", r.allocator.c_str(), r.library.empty() ? "" : " (",
              r.library.c_str(), r.library.empty() ? "" : ")");
  std::printf("status              %s%s%s\n", replay::statusName(r.status), r.detail.empty() ? "" : ": ",
              r.detail.c_str());
  if (r.status == replay::ReplayStatus::Unavailable || r.status == replay::ReplayStatus::Crashed) return;
  std::printf("events              %llu (%llu objects, %llu failed in the trace)\n",
              static_cast<unsigned long long>(r.events), static_cast<unsigned long long>(r.objects),
              static_cast<unsigned long long>(r.failedEvents));
  std::printf("threads             %llu replaying %llu recorded (%s)\n",
              static_cast<unsigned long long>(r.threads),
              static_cast<unsigned long long>(r.recordedThreads),
              replay::threadModeText(r).c_str());
  std::printf("wall time           %.6f s\n", r.wallSeconds);
  std::printf("cpu time            %.6f s\n", r.cpuSeconds);
  std::printf("allocator time      %.6f s%s\n", r.allocatorSeconds,
              r.threadMode == replay::ThreadMode::Single ? " (not measured on one thread)" : "");
  std::printf("peak heap           %s (%llu bytes)\n", humanBytes(r.peakHeapBytes).c_str(),
              static_cast<unsigned long long>(r.peakHeapBytes));
  std::printf("start-up heap       %s (%llu bytes)\n", humanBytes(r.startupHeapBytes).c_str(),
              static_cast<unsigned long long>(r.startupHeapBytes));
  std::printf("peak live           %s (%llu bytes)\n", humanBytes(r.peakLiveBytes).c_str(),
              static_cast<unsigned long long>(r.peakLiveBytes));
  std::printf("fragmentation       %.1f %%\n", r.fragmentationPercent);
  std::printf("heap limit hit      %s\n", r.status == replay::ReplayStatus::HeapLimit ? "yes" : "no");
  std::printf("failed allocations  %llu\n", static_cast<unsigned long long>(r.failedAllocations));
}

// Parses the arguments, runs the replay, prints the result.
int runReplayCommand(std::span<char* const> args) {
  replay::ReplayOptions opt;
  bool json = false, haveAllocator = false;
  static constexpr support::OptionSpec kOptions[] = {
      {"--allocator", true, {}, "a SPEC"}, {"--threads", true, {}, "a number from 0 to 64"},
      {"--heap-limit", true, {}, "a SIZE such as 512M or 2G"}, {"--series", true, {}, "a file name"},    {"--json"},          {"--no-write"}};
  support::ParsedArgs parsed;
  if (std::string err = support::parseArgs(args, kOptions, parsed); !err.empty())
    return usageError(err);
  if (parsed.dashDash) return usageError("unexpected '--' (replay takes a trace FILE)");
  for (const support::GivenOption& o : parsed.options) {
    const std::string& value = o.value;
    if (o.name == "--allocator") {
      opt.allocator = value;
      haveAllocator = true;
    } else if (o.name == "--threads") {
      const auto n = support::parseUnsigned(value);
      if (!n || *n > 64) return usageError("--threads needs a number from 0 to 64");
      opt.threads = static_cast<unsigned>(*n);
    } else if (o.name == "--heap-limit") {
      const auto n = support::parseSize(value);
      if (!n || *n == 0)
        return usageError("--heap-limit needs a SIZE (" + std::string(support::kSizeHelp) +
                          ") such as 512M or 2G, got '" + value + "'");
      opt.heapLimit = *n;
    } else if (o.name == "--series") {
      if (value.empty()) return usageError("--series needs a file name");
      opt.seriesPath = value;
    } else if (o.name == "--json") {
      json = true;
    } else if (o.name == "--no-write") {
      opt.writeObjects = false;
    }
  }
  if (parsed.operands.size() > 1)
    return usageError("more than one trace file ('" + parsed.operands[0] + "', '" +
                      parsed.operands[1] + "')");
  std::string file = parsed.operands.empty() ? std::string() : parsed.operands[0];
  if (file.empty()) return usageError("missing the trace FILE");
  if (!haveAllocator)
    return usageError("missing --allocator SPEC (known: " + knownAllocatorNames() + ", none)");
  AllocatorSpec spec;
  if (const std::string err = parseSpec(opt.allocator, spec, true); !err.empty()) {
    std::fprintf(stderr, "strata replay: %s\n", err.c_str());
    return 2;
  }
  {
    const ResolvedAllocator resolved = resolve(spec, defaultSearchDirs());
    if (!resolved.available) {
      std::fprintf(stderr, "strata replay: allocator '%s' is not available: %s\n",
                   spec.label.c_str(), resolved.detail.c_str());
      return 1;
    }
    if (const ProbeResult p = probe(resolved); !p.ok) {
      std::fprintf(stderr, "strata replay: %s\n", p.reason.c_str());
      return 2;
    }
  }
  opt.tracePath = file;

  replay::ReplayResult r;
  try {
    r = replay::runReplay(opt, defaultSearchDirs());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strata replay: %s\n", e.what());
    return 1;
  }
  if (r.status == replay::ReplayStatus::Unavailable) {
    std::fprintf(stderr, "strata replay: allocator '%s' is not available: %s\n",
                 spec.label.c_str(), r.detail.c_str());
    return 1;
  }
  if (json) std::printf("%s\n", replay::toJson(r).c_str());
  else printResult(file, r);
  if (r.status == replay::ReplayStatus::Ok || r.status == replay::ReplayStatus::HeapLimit) return 0;
  std::fprintf(stderr, "strata replay: %s on %s: %s\n", replay::statusName(r.status), spec.label.c_str(),
               r.detail.c_str());
  return 1;
}

}  // namespace

const Command kReplayCommand{"replay", "replay an allocation trace against one allocator", kHelp,
                             &runReplayCommand};

}  // namespace strata::cli
