// record_overhead: what recording costs. Runs preload_workload (the allocation-heavy
// program beside this one, see preload_workload.cpp) on glibc malloc with and without the
// recorder (libstrata-record.so) preloaded, alternating the two in each round, and prints per
// workload the median workload time of each, the median of the per-round ratios
// (recorded / plain; the target is under 2x), and the trace it wrote: events,
// bytes, bytes per event, and events per second while recording.
//
//   record_overhead                         every workload, 5 rounds (about a minute)
//   record_overhead --quick                 1/20 size, 3 rounds
//   record_overhead --runs 9 --workload churn-1t
//   record_overhead --sites                 the recorder with allocation sites (as
//                                           `strata record --sites`: STRATA_TRACE_SITES=1)
//
// STRATA_TRACE_CLOCK=tsc|fine|coarse in the environment measures the recorder with that clock.
// The time is preload_workload's own (the workload only: start-up, the recorder's set-up
// and its final flush at exit are outside it), so the ratio is the cost per allocation
// call. The recorder is found in $STRATA_LIB_DIR or <dir of this program>/../lib; traces go
// to a temporary directory and are deleted.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "measure.hpp"
#include "preload_run.hpp"
#include "record/record_session.hpp"
#include "strata/protocol/recorder_environment.hpp"
#include "strata/trace/reader.hpp"
#include "table_options.hpp"


namespace ro {

using Workload = strata::bench::PreloadWorkload;

// One run: the workload's time, and for a recorded run the trace's figures.
struct Sample {
  bool ok = false;
  double ms = 0;
  double cpuMs = 0;  // user + system time of the whole process (start-up and exit included)
  unsigned long long events = 0, bytes = 0, sites = 0;
  std::string error;
};

// Reads a trace back: its event count and size. False (with why) when it does not read.
bool readTraceFigures(const std::string& path, Sample& s) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    s.error = "no trace written";
    return false;
  }
  strata::trace::TraceReader<strata::trace::FdSource> r(strata::trace::FdSource{fd});
  strata::trace::Event e;
  strata::trace::ReadStatus st;
  while ((st = r.next(e)) == strata::trace::ReadStatus::Event) {
  }
  ::close(fd);
  if (st == strata::trace::ReadStatus::Error) {
    s.error = "bad trace: " + r.error().message();
    return false;
  }
  if (!r.complete()) {
    s.error = "trace has no trailer";
    return false;
  }
  s.events = r.eventsRead();
  s.bytes = r.bytesRead();
  s.sites = r.sites().siteCount();
  return true;
}

// Runs preload_workload once, with the recorder preloaded when recorder is not empty (trace
// to tracePath, read back and deleted), with allocation sites when `sites`.
Sample runOnce(const std::string& program, const Workload& w, double scale,
               const std::string& recorder, const std::string& tracePath, bool sites) {
  Sample s;
  std::vector<std::string> add;
  if (!recorder.empty()) {
    add.push_back("LD_PRELOAD=" + recorder);
    strata::record::RecordSettings settings;
    settings.sites = sites;
    for (std::string& e : strata::record::recorderEnvironment(tracePath, settings))
      add.push_back(std::move(e));
  }
  namespace env = strata::protocol::env;
  const strata::support::ProcessResult run = strata::bench::runPreloadWorkload(
      program, w, scale, {"LD_PRELOAD", env::kFile, env::kOwnerPid, env::kSites}, add);
  s.cpuMs = run.cpuSeconds() * 1e3;
  s.error = strata::bench::runFailure(run);
  if (!s.error.empty()) return s;
  const std::string& out = run.out;
  const std::size_t t = out.find("time_ms ");
  if (t == std::string::npos) {
    s.error = "no report";
    return s;
  }
  s.ms = std::strtod(out.c_str() + t + 8, nullptr);
  if (!recorder.empty()) {
    if (out.find("libstrata-record.so") == std::string::npos) {
      s.error = "the recorder was not in effect";
      return s;
    }
    const bool read = readTraceFigures(tracePath, s);
    ::unlink(tracePath.c_str());
    if (!read) return s;
    if (sites && s.sites == 0) {
      s.error = "the trace has no allocation sites";
      return s;
    }
  }
  s.ok = true;
  return s;
}

const strata::bench::TableProgram kProgram{
    "record_overhead", "record_overhead [--quick] [--runs N] [--workload NAME] [--sites]",
    "churn server grow-shrink tiny (both thread counts), or one variant: churn-1t, tiny-2t, ...",
    "preload_workload with and without the recorder: time ratio and trace size", false};

// Takes --sites, this program's own option, out of the command line: whether it was given,
// and the rest (argv[0] included) for the table programs' common parser.
bool takeSitesOption(int argc, char** argv, std::vector<char*>& rest) {
  bool sites = false;
  for (int i = 0; i < argc; ++i) {
    if (i > 0 && std::strcmp(argv[i], "--sites") == 0) {
      sites = true;
    } else {
      rest.push_back(argv[i]);
    }
  }
  return sites;
}

// The recorder: $STRATA_LIB_DIR/libstrata-record.so, else <dir>/../lib/; a usage error
// when it is not there.
std::string recorderPath(const std::string& dir) {
  const char* libDir = std::getenv("STRATA_LIB_DIR");
  const std::string recorder =
      std::string(libDir != nullptr && libDir[0] != '\0' ? libDir : dir + "/../lib") +
      "/libstrata-record.so";
  if (::access(recorder.c_str(), R_OK) != 0)
    strata::bench::tableUsage(kProgram,
                              (recorder + " not found: build the CMake target strata_record").c_str());
  return recorder;
}

// The table's heading: what is measured, with which recorder and clock, and the columns.
void printHeading(const strata::bench::TableOptions& opt, const std::string& recorder, bool sites) {
  std::printf("Recording overhead on preload_workload (glibc malloc): median of %d rounds%s\n",
              opt.runs, opt.quick ? " (--quick: 1/20 size)" : "");
  const char* clock = std::getenv(strata::protocol::env::kClock);
  std::printf("recorder: %s, clock %s (STRATA_TRACE_CLOCK), allocation sites %s\n",
              recorder.c_str(),
              clock != nullptr ? clock : "default: tsc where the kernel's clocksource is the TSC",
              sites ? "on (--sites)" : "off");
  std::printf("ms = the workload's wall time; ratio = median over the rounds of recorded/plain "
              "within each round (target < 2);\ncpu ratio = the same for the process's user+system "
              "time (less disturbed by other load on the machine)\n\n");
  std::printf("%-15s %9s %9s %6s %6s %10s %9s %8s %9s%s\n", "workload", "plain ms", "rec. ms",
              "ratio", "cpu", "events", "trace MiB", "B/event", "Mevents/s",
              sites ? "    sites" : "");
}

// What a table run needs to run preload_workload with and without the recorder.
struct Setup {
  std::string program, recorder, tracePath;
  double scale;
  int runs;
  bool sites;
};

// Runs one workload plain and recorded in each round and prints its row; false if no round
// gave both.
bool workloadRow(const Setup& su, const Workload& w) {
  std::vector<double> plain, rec, ratios, cpuRatios;
  Sample last;
  std::string error;
  for (int round = 0; round < su.runs; ++round) {
    // Alternate which goes first, so drift in the machine's speed cancels.
    Sample p, r;
    if (round % 2 == 0) {
      p = runOnce(su.program, w, su.scale, "", su.tracePath, su.sites);
      r = runOnce(su.program, w, su.scale, su.recorder, su.tracePath, su.sites);
    } else {
      r = runOnce(su.program, w, su.scale, su.recorder, su.tracePath, su.sites);
      p = runOnce(su.program, w, su.scale, "", su.tracePath, su.sites);
    }
    if (!p.ok || !r.ok) {
      error = !p.ok ? "plain: " + p.error : "recorded: " + r.error;
      continue;
    }
    plain.push_back(p.ms);
    rec.push_back(r.ms);
    ratios.push_back(r.ms / p.ms);
    cpuRatios.push_back(r.cpuMs / p.cpuMs);
    last = r;
  }
  if (ratios.empty()) {
    std::printf("%-15s failed: %s\n", w.label().c_str(), error.c_str());
    return false;
  }
  const double recMs = strata::bench::median(rec);
  std::printf("%-15s %9.1f %9.1f %6.2f %6.2f %10llu %9.1f %8.2f %9.1f", w.label().c_str(),
              strata::bench::median(plain), recMs, strata::bench::median(ratios),
              strata::bench::median(cpuRatios), last.events,
              static_cast<double>(last.bytes) / (1024.0 * 1024.0),
              static_cast<double>(last.bytes) / static_cast<double>(last.events),
              static_cast<double>(last.events) / (recMs * 1000.0));
  if (su.sites) std::printf(" %8llu", last.sites);
  std::printf("\n");
  return true;
}

}  // namespace ro

int main(int argc, char** argv) {
  using namespace ro;
#if defined(__SANITIZE_ADDRESS__)
  std::fputs("record_overhead: built with AddressSanitizer, which owns malloc; nothing can be "
             "preloaded. Use a build without STRATA_SANITIZE.\n",
             stderr);
  return 2;
#endif
  std::vector<char*> args;
  const bool sites = takeSitesOption(argc, argv, args);
  const strata::bench::TableOptions opt =
      strata::bench::parseTableOptions(kProgram, static_cast<int>(args.size()), args.data());
  const std::string dir = strata::bench::programDirectory();
  const std::string program = dir + "/preload_workload";
  if (::access(program.c_str(), X_OK) != 0)
    strata::bench::tableUsage(kProgram, (program + " not found: build preload_workload").c_str());
  const std::string recorder = recorderPath(dir);
  char tmpl[] = "/tmp/record-overhead-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) {
    std::perror("record_overhead: mkdtemp");
    return 1;
  }
  const Setup setup{program, recorder, std::string(tmpl) + "/w.trace", opt.quick ? 0.05 : 1.0,
                    opt.runs, sites};
  const std::vector<const Workload*> workloads =
      strata::bench::choosePreloadWorkloads(kProgram, opt.workload);

  printHeading(opt, recorder, sites);
  int failures = 0;
  for (const Workload* w : workloads)
    if (!workloadRow(setup, *w)) ++failures;
  ::rmdir(tmpl);
  return failures == 0 ? 0 : 1;
}
