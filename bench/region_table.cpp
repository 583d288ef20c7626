// region_table: regions, obstacks, pools, arenas and reaps side by side on region-style
// programs (after the reaps paper, "Reconsidering Custom Memory Allocation", §2 and §6):
// time, its ratio to the reap's, and peak memory, one table per workload.
//
//   region_table                   every workload, 5 runs each (under ~3 minutes)
//   region_table --quick           small workloads, 3 runs (a few seconds)
//   region_table --runs 9 --workload producer-consumer
//
// Workloads (every object's requested bytes are written once):
//   phases             compiler-like: 20 phases, each a region of 150k objects of 8..128 B
//                      created, filled and destroyed at once; a long-lived root region.
//   scopes             obstack style: nested scopes (random walk, depth <= 64), 1..8 objects
//                      of 8..256 B per scope, each scope freed back to its mark (or, where
//                      the API has no mark, a child region destroyed).
//   stack              xalloc style: a random walk of LIFO pushes and pops (objects of
//                      16..256 B), each pop freeing the most recent live object.
//   producer-consumer  a FIFO queue (2000..40000 objects of 16..256 B, the producer ahead
//                      and behind in turns): the producer allocates, the consumer frees the
//                      oldest. Allocators that cannot
//                      free one object grow without bound here.
//   server             16 open connections, each a child region of the server, living for
//                      8..32 requests; each request a child region of its connection with
//                      20..60 objects of 16..512 B and one 1..8 KiB buffer.
//
// Every run is a fork()ed child (measure.hpp, shared with gp_table): warm-up, file
// mappings made resident, peak-RSS reset, exact baseline; the clock covers the whole
// workload, region creation and destruction included. Columns:
//   time   median wall time, ms
//   ratio  time / the reap's time (or glibc malloc's when the reap is not built)
//   RSS    peak resident growth during the run, MiB, measured the same way for all
//   held   peak bytes Strata heaps held from the system (processAccount()); blank otherwise
//   RSS/live, held/live   the same divided by the workload's peak live bytes
//   live   (title line) the workload's peak of requested bytes alive at once
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "measure.hpp"
#include "region_table/adapters.hpp"
#include "region_table/region_workloads.hpp"
#include "table_options.hpp"

namespace rt {

using strata::bench::Clock;
using strata::bench::RunResult;

// ---------------------------------------------------------------------------------------
// Measurement
// ---------------------------------------------------------------------------------------

template <class A>
RunResult measureOnce(int w, double scale, bool strataHeap) {
  using namespace strata::bench;
  return inChild([&] {
    RunResult r;
    Entry* scratch = reinterpret_cast<Entry*>(freshSlots(kScratch * 2));
    if (scratch == nullptr) return r;
    {  // warm-up: the code paths once, on a tiny version of the workload
      A warm;
      Ctx wc{0.0005, scratch};
      runWorkload(w, warm, wc);
    }
    populateFileMappings();
    if (!resetPeakRss()) return r;
    strata::processAccount().resetPeak();
    const std::size_t heldBefore = strata::processAccount().held();
    const std::size_t before = exactRss();
    Ctx c{scale, scratch};
    const auto t0 = Clock::now();
    {
      A a;
      runWorkload(w, a, c);
    }
    r.ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    r.rss = peakDelta(before);
    r.held = strataHeap ? strata::processAccount().peak() - heldBefore : 0;
    r.failures = c.failures;
    r.ok = true;
    return r;
  });
}

struct Allocator {
  std::string name;
  bool built;          // false: printed as "not built"
  bool strataHeap;     // held is measured
  bool isReap;
  std::function<RunResult(int, double)> run;
};

template <class A>
Allocator entry(std::string name, bool strataHeap = false, bool isReap = false) {
  return {std::move(name), true, strataHeap, isReap,
          [strataHeap](int w, double s) { return measureOnce<A>(w, s, strataHeap); }};
}
Allocator missing(std::string name) { return {std::move(name), false, false, false, {}}; }

std::vector<Allocator> allocators() {
  std::vector<Allocator> all;
  // STRATA_ENTRIES_BEGIN
#ifdef RT_HAVE_REAP
  all.push_back(entry<StrataReap>("strata Reap", true, true));
#else
  all.push_back(missing("strata Reap"));
#endif
#ifdef RT_HAVE_ZONE
  all.push_back(entry<StrataZone>("strata ZoneHeap", true));
#else
  all.push_back(missing("strata ZoneHeap"));
#endif
#ifdef RT_HAVE_OBSTACK
  all.push_back(entry<StrataObstack>("strata ObstackHeap", true));
#else
  all.push_back(missing("strata ObstackHeap"));
#endif
#ifdef RT_HAVE_XALLOC
  all.push_back(entry<StrataXalloc>("strata XallocHeap", true));
#else
  all.push_back(missing("strata XallocHeap"));
#endif
  // STRATA_ENTRIES_END
  all.push_back(entry<GlibcObstack>("glibc obstack"));
  all.push_back(entry<AprPools>("APR pools"));
  all.push_back(entry<Talloc>("talloc"));
  all.push_back(entry<TallocPool>("talloc_pool"));
  all.push_back(entry<PmrMonotonic>("pmr monotonic"));
  all.push_back(entry<PmrPool>("pmr unsync pool"));
  if (miApi().ok()) {
    all.push_back(entry<MimallocHeap>("mimalloc heap"));
  } else {
    all.push_back(missing("mimalloc heap"));
  }
#ifdef RT_HAVE_REGION
  all.push_back(entry<RegionEmulator>("region emulator"));
#else
  all.push_back(missing("region emulator"));
#endif
  all.push_back(entry<PlainMalloc>("glibc malloc/free"));
  return all;
}

std::size_t peakLive(int w, double scale) {
  LiveCounter counter;
  std::vector<Entry> scratch(kScratch);
  Ctx c{scale, scratch.data()};
  c.touch = false;
  runWorkload(w, counter, c);
  return counter.peak;
}

using Options = strata::bench::TableOptions;

const strata::bench::TableProgram kProgram{
    "region_table", "region_table [--quick] [--runs N] [--workload NAME] [--allocator NAME]",
    "phases scopes stack producer-consumer server (or a..e)",
    "time and memory of region allocators on region programs", false};

Options parse(int argc, char** argv) {
  return strata::bench::parseTableOptions(kProgram, argc, argv);
}

constexpr double kMiB = 1024.0 * 1024.0;

// Whether `opt.workload` names workload w, by name or by its letter (a..e).
bool selected(const Options& opt, int w) {
  return opt.workload.empty() || opt.workload == kWorkloads[w].name ||
         (opt.workload.size() == 1 && opt.workload[0] == "abcde"[w]);
}

// The allocators --allocator leaves, after checking it and --workload name something.
std::vector<Allocator> chosenAllocators(const Options& opt) {
  std::vector<Allocator> allocs = allocators();
  if (!opt.allocator.empty()) {
    std::erase_if(allocs, [&](const Allocator& a) { return a.name != opt.allocator; });
    if (allocs.empty())
      strata::bench::tableUsage(kProgram, ("no allocator named " + opt.allocator).c_str());
  }
  if (!opt.workload.empty()) {
    bool known = false;
    for (int w = 0; w < kWorkloadCount; ++w) known = known || selected(opt, w);
    if (!known) strata::bench::tableUsage(kProgram, ("no workload named " + opt.workload).c_str());
  }
  return allocs;
}

// One allocator's figures on one workload: medians of the runs that succeeded, and its
// ratio to the base row.
struct Row {
  const Allocator* a;
  double ms = 0, rss = 0, held = 0, ratio = 0;
  int ok = 0, failed = 0;
};

// Runs workload w `runs` rounds, every allocator once per round in turn, and reduces the runs
// to rows.
std::vector<Row> measureRows(const std::vector<Allocator>& allocs, int w, double scale,
                             int runs) {
  std::vector<Row> rows;
  for (const Allocator& a : allocs) rows.push_back({&a});
  std::vector<std::vector<double>> ms(rows.size()), rss(rows.size()), held(rows.size());
  std::vector<std::vector<double>> round(rows.size());  // each round's time, -1 if it failed
  for (int run = 0; run < runs; ++run) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (!rows[i].a->built) continue;
      const RunResult r = rows[i].a->run(w, scale);
      if (!r.ok || r.failures != 0) {
        ++rows[i].failed;
        round[i].push_back(-1);
        continue;
      }
      round[i].push_back(r.ms);
      ms[i].push_back(r.ms);
      rss[i].push_back(static_cast<double>(r.rss));
      held[i].push_back(static_cast<double>(r.held));
    }
  }
  std::size_t baseRow = rows.size();
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].a->isReap && !ms[i].empty()) baseRow = i;
  if (baseRow == rows.size())
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (rows[i].a->name == "glibc malloc/free" && !ms[i].empty()) baseRow = i;
  // Each row's ratio is the median of its per-round ratios to the base row, so that a change
  // of load on the machine between rounds cancels out.
  for (std::size_t i = 0; i < rows.size() && baseRow < rows.size(); ++i)
    rows[i].ratio = strata::bench::pairedRatio(round[i], round[baseRow]);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (ms[i].empty()) continue;
    rows[i].ok = static_cast<int>(ms[i].size());
    rows[i].ms = strata::bench::median(ms[i]);
    rows[i].rss = strata::bench::median(rss[i]);
    rows[i].held = strata::bench::median(held[i]);
  }
  return rows;
}

// Prints one row; false when any of its runs failed.
bool printRow(const Row& r, double live) {
  if (!r.a->built) {
    std::printf("%-20s %9s %7s %9s %8s %9s %9s  not built\n", r.a->name.c_str(), "-", "-",
                "-", "-", "-", "-");
    return true;
  }
  if (r.ok == 0) {
    std::printf("%-20s %9s %7s %9s %8s %9s %9s  FAILED in all %d runs\n",
                r.a->name.c_str(), "-", "-", "-", "-", "-", "-", r.failed);
    return false;
  }
  char heldText[32] = "", heldRatio[32] = "";
  if (r.a->strataHeap) {
    std::snprintf(heldText, sizeof heldText, "%.2f", r.held / kMiB);
    std::snprintf(heldRatio, sizeof heldRatio, "%.2f", live > 0 ? r.held / live : 0.0);
  }
  char status[48] = "ok";
  if (r.failed != 0) std::snprintf(status, sizeof status, "ok (%d runs failed)", r.failed);
  std::printf("%-20s %9.1f %7.2f %9.2f %8.2f %9s %9s  %s\n", r.a->name.c_str(), r.ms,
              r.ratio, r.rss / kMiB, live > 0 ? r.rss / live : 0.0,
              heldText, heldRatio, status);
  return r.failed == 0;
}

}  // namespace rt

int main(int argc, char** argv) {
  using namespace rt;
  const Options opt = parse(argc, argv);
  const double scale = opt.quick ? 0.05 : 1.0;
  apr_initialize();
  const std::vector<Allocator> allocs = chosenAllocators(opt);
  std::printf("Region allocators: median of %d runs, each in a fresh child process%s\n",
              opt.runs, opt.quick ? " (--quick: 1/20 size)" : "");
  std::printf("ratio = median over the rounds of time / the reap's time in the same round "
              "(glibc malloc/free's if the reap is not built); "
              "RSS = peak resident growth; held = peak bytes a Strata heap held\n");

  bool matched = false, anyFailed = false;
  for (int w = 0; w < kWorkloadCount; ++w) {
    if (!selected(opt, w)) continue;
    matched = true;
    const double live = static_cast<double>(peakLive(w, scale));
    std::printf("\n%s — %s; peak live %.2f MiB\n", kWorkloads[w].name, kWorkloads[w].what,
                live / kMiB);
    std::printf("%-20s %9s %7s %9s %8s %9s %9s  %s\n", "allocator", "time ms", "ratio",
                "RSS MiB", "RSS/live", "held MiB", "held/live", "status");
    for (const Row& r : measureRows(allocs, w, scale, opt.runs))
      if (!printRow(r, live)) anyFailed = true;
  }
  if (!matched)
    strata::bench::tableUsage(kProgram, ("no workload named " + opt.workload).c_str());
  return anyFailed ? 1 : 0;
}
