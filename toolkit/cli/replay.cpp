// `strata replay FILE --allocator SPEC [--json] [--threads N] [--heap-limit SIZE] [--no-write]
// [--series CSV]`: replays a trace against one allocator in a child process (runReplay) and
// prints what it measured, as a readable block or one JSON object.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "support/format.hpp"
#include "registry/allocator_registry.hpp"
#include "registry/allocator_spec.hpp"
#include "cli/command.hpp"
#include "support/error.hpp"
#include "support/options.hpp"
#include "replay/replay_runner.hpp"

namespace strata::cli {
namespace {

constexpr std::string_view kAbout =
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
    "order, waiting for objects other threads create. See docs/toolkit/replay.md.\n"
    "\n";

constexpr std::string_view kNotes =
    "\n"
    "Exit status: 0 when the replay ran (status ok or heap-limit); 1 when it could not (bad\n"
    "trace, allocator not installed, replay crashed); 2 for a wrong invocation or a library\n"
    "that cannot be preloaded or does not take over malloc.\n";

// "12.3 MiB" for a byte count, "123 bytes" below 1 KiB.
std::string humanBytes(std::uint64_t n) {
  return n < 1024 ? std::to_string(n) + " bytes" : support::scaledBytes(static_cast<double>(n));
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

// The options, bound to the replay's options and the command's own flags.
std::vector<support::Option> optionTable(replay::ReplayOptions& opt, std::string& allocator,
                                         bool& haveAllocator, bool& json) {
  return {
      {.name = "--allocator", .value = "SPEC",
       .help = "glibc, jemalloc, mimalloc, tcmalloc, strata-kingsley, strata-lea,\n"
               "strata, strata-secure (`strata allocators`), a library path (./libmine.so), or\n"
               "none (a do-nothing allocator that measures the harness alone);\n"
               "settings follow as :NAME=VALUE, set in the replay's environment\n"
               "(jemalloc:MALLOC_CONF=narenas:1; `strata run --help` has more)",
       .bind = [&allocator, &haveAllocator](const std::string& v) {
         allocator = v;
         haveAllocator = true;
       },
       .needs = "a SPEC"},
      {.name = "--json", .help = "print one JSON object instead of the table", .bind = json},
      {.name = "--threads", .value = "N",
       .help = "replay threads: 0 (default) the program's threads, started and\n"
               "ended as recorded (traces without thread events: one per\n"
               "recorded thread, at most 64); N a fixed pool of N; 1 the recorded\n"
               "total order on one thread",
       .bind = [&opt](const std::string& v) {
         const auto n = support::parseUnsigned(v);
         if (!n || *n > 64) throw support::UsageError("--threads needs a number from 0 to 64");
         opt.threads = static_cast<unsigned>(*n);
       },
       .needs = "a number from 0 to 64"},
      {.name = "--heap-limit", .value = "SIZE",
       .help = "stop with status heap-limit when the heap exceeds SIZE bytes\n"
               "(suffixes K, M, G, T: powers of 1024)",
       .bind = [&opt](const std::string& v) {
         const auto n = support::parseSize(v);
         if (!n || *n == 0)
           throw support::UsageError("--heap-limit needs a SIZE (" + std::string(support::kSizeHelp) +
                                     ") such as 512M or 2G, got '" + v + "'");
         opt.heapLimit = *n;
       },
       .needs = "a SIZE such as 512M or 2G"},
      {.name = "--no-write", .help = "do not write the objects' bytes",
       .bind = {opt.writeObjects, false}},
      {.name = "--series", .value = "CSV",
       .help = "write the heap/live curve (seconds,event,heap_bytes,live_bytes)",
       .bind = [&opt](const std::string& v) {
         if (v.empty()) throw support::UsageError("--series needs a file name");
         opt.seriesPath = v;
       },
       .needs = "a file name"},
  };
}

const std::string kHelp = [] {
  replay::ReplayOptions opt;
  std::string allocator;
  bool haveAllocator = false, json = false;
  return std::string(kAbout) +
         support::formatOptions(optionTable(opt, allocator, haveAllocator, json), 24) +
         std::string(kNotes);
}();

// Parses the arguments, runs the replay, prints the result.
int runReplayCommand(std::span<char* const> args) {
  replay::ReplayOptions opt;
  std::string allocatorText;
  bool json = false, haveAllocator = false;
  const support::Operands parsed =
      support::parseOptions(args, optionTable(opt, allocatorText, haveAllocator, json));
  if (parsed.dashDash) throw support::UsageError("unexpected '--' (replay takes a trace FILE)");
  if (parsed.operands.size() > 1)
    throw support::UsageError("more than one trace file ('" + parsed.operands[0] + "', '" +
                      parsed.operands[1] + "')");
  std::string file = parsed.operands.empty() ? std::string() : parsed.operands[0];
  if (file.empty()) throw support::UsageError("missing the trace FILE");
  if (!haveAllocator)
    throw support::UsageError("missing --allocator SPEC (known: " + registry::knownAllocatorNames() + ", none)");
  // Parsed and resolved once, here; the runner takes the result. A spec that names nothing
  // usable throws (exit status 2, error.hpp).
  const registry::AllocatorSpec spec = registry::parseSpec(allocatorText, true);
  const registry::ResolvedAllocator resolved = resolve(spec, registry::defaultSearchDirs());
  if (!resolved.available)
    throw support::Error("allocator '" + spec.label + "' is not available: " + resolved.detail);
  if (const registry::ProbeResult p = probe(resolved); !p.ok) throw support::Error(p.reason, 2);
  opt.tracePath = file;

  const replay::ReplayResult r = replay::runReplay(opt, resolved);
  if (r.status == replay::ReplayStatus::Unavailable)
    throw support::Error("allocator '" + spec.label + "' is not available: " + r.detail);
  if (json) std::fputs(replay::toJson(r).c_str(), stdout);
  else printResult(file, r);
  if (r.status == replay::ReplayStatus::Ok || r.status == replay::ReplayStatus::HeapLimit) return 0;
  throw support::Error(std::string(replay::statusName(r.status)) + " on " + spec.label + ": " + r.detail);
}

}  // namespace

const Command kReplayCommand{"replay", "replay an allocation trace against one allocator", kHelp,
                             &runReplayCommand};

}  // namespace strata::cli
