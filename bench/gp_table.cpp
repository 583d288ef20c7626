// gp_table: the general-purpose allocators side by side on allocation-intensive workloads:
// time, memory held from the system, peak live bytes and fragmentation, one table.
//
//   gp_table                 every workload, 5 runs each, a table
//   gp_table --quick         small workloads, 3 runs (a smoke test, about a second)
//   gp_table --runs 9 --csv  more runs, machine-readable output
//
// Allocators: KingsleyHeap<SbrkHeap<>>, KingsleyCoalesceHeap<> and LeaHeap<> (each only if
// its header exists) and glibc malloc.
//
// Every run is a fork()ed child, so each allocator starts from a fresh process image and
// is measured by the kernel the same way. In the child: a short warm-up, every file mapping
// made resident (so code first run later is not counted), the peak-RSS counter reset
// (/proc/self/clear_refs) and the exact resident size taken; then the clock starts, the heap
// is built, the workload replayed (every requested byte is written once, as a program
// would), and the clock stops before the heap is destroyed. Columns (see bench/README.md):
//   time   median wall time of the runs, ms (heap construction included, destruction not)
//   held   peak bytes held from the system: exact for Strata heaps (processAccount(), the
//          bytes their top heaps obtained); for glibc, mallinfo2() arena + hblkhd sampled
//          in one extra, untimed run (marked ~)
//   RSS    peak resident set during the run minus the resident set before it: measured the
//          same way for every allocator
//   live   peak of the sum of requested sizes alive at once (from the workload)
//   frag   held / live - 1 and RSS / live - 1, in percent
// The fork/pipe and /proc machinery is in measure.hpp, shared with region_table; glibc as a
// heap and its sampled held bytes, the workloads and the table rows are in gp_table/.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "strata/general/kingsley_heap.hpp"
#include "strata/top/memory_account.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "measure.hpp"
#include "table_options.hpp"
#include "workloads.hpp"
#include "gp_table/glibc_held.hpp"
#include "gp_table/gp_row.hpp"
#include "gp_table/gp_workloads.hpp"

// Being written alongside; picked up as soon as they exist.
#if __has_include("strata/general/kingsley_coalesce_heap.hpp")
#include "strata/general/kingsley_coalesce_heap.hpp"
#endif
#if __has_include("strata/general/lea_heap.hpp")
#include "strata/general/lea_heap.hpp"
#endif

namespace gp {

using strata::bench::Clock;
using strata::bench::exactRss;
using strata::bench::freshSlots;
using strata::bench::inChild;
using strata::bench::median;
using strata::bench::Op;
using strata::bench::peakDelta;
using strata::bench::populateFileMappings;
using strata::bench::resetPeakRss;
using strata::bench::RunResult;
using strata::bench::Workload;

// The measured loop: every object's requested bytes are written once, so pages are touched
// as a real program touches them. Returns how many mallocs failed.
template <class H>
[[gnu::noinline]] std::size_t replayTouching(H& heap, const Op* ops, std::size_t n,
                                             void** slots) {
  std::size_t failures = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Op op = ops[i];
    if (op.size != 0) {
      void* p = heap.malloc(op.size);
      slots[op.slot] = p;
      if (p != nullptr) {
        std::memset(p, static_cast<int>(i & 0xff) | 1, op.size);
      } else {
        ++failures;
      }
    } else {
      heap.free(slots[op.slot]);
    }
  }
  return failures;
}

// Runs the heap on a few objects before the baseline, so that one-off start-up costs (code
// faulted in, glibc setting up its arena) are not measured as the workload's.
template <class H>
void warmUp() {
  H heap;
  void* objects[8];
  for (std::size_t i = 0; i < 8; ++i) {
    objects[i] = heap.malloc(std::size_t{24} << i);
    if (objects[i] != nullptr) std::memset(objects[i], 0, std::size_t{24} << i);
  }
  for (void* p : objects) heap.free(p);
}

// One measured run of a Strata heap (in the child).
template <class H>
RunResult runStrata(const Workload& w, void** slots) {
  RunResult r;
  strata::processAccount().resetPeak();
  const std::size_t before = strata::processAccount().held();
  const std::size_t rssBefore = exactRss();
  const auto t0 = Clock::now();
  {
    H heap;
    r.failures = replayTouching(heap, w.ops.data(), w.ops.size(), slots);
    r.ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    r.rss = peakDelta(rssBefore);
  }
  r.held = strata::processAccount().peak() - before;
  r.ok = true;
  return r;
}

// One measured run of glibc malloc (in the child).
RunResult runGlibc(const Workload& w, void** slots) {
  RunResult r;
  const std::size_t rssBefore = exactRss();
  GlibcMalloc heap;
  const auto t0 = Clock::now();
  r.failures = replayTouching(heap, w.ops.data(), w.ops.size(), slots);
  r.ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  r.rss = peakDelta(rssBefore);
  r.ok = true;
  return r;
}

struct Allocator {
  std::string name;
  bool strata;                                          // held is exact
  std::function<void()> warm;                           // in the child, before the baseline
  std::function<RunResult(const Workload&, void**)> run;
};

template <class H>
Allocator strataAllocator(std::string name) {
  return {std::move(name), true, [] { warmUp<H>(); },
          [](const Workload& w, void** slots) { return runStrata<H>(w, slots); }};
}

std::vector<Allocator> allocators() {
  std::vector<Allocator> all;
  all.push_back(strataAllocator<strata::KingsleyHeap<strata::SbrkHeap<>>>("Kingsley"));
#if __has_include("strata/general/kingsley_coalesce_heap.hpp")
  all.push_back(strataAllocator<strata::KingsleyCoalesceHeap<>>("Kingsley+coalesce"));
#endif
#if __has_include("strata/general/lea_heap.hpp")
  all.push_back(strataAllocator<strata::LeaHeap<>>("Lea"));
#endif
  all.push_back({"glibc malloc", false, [] { warmUp<GlibcMalloc>(); }, runGlibc});
  return all;
}

RunResult measure(const Allocator& a, const Workload& w) {
  return inChild([&] {
    RunResult fail;
    void** slots = freshSlots(w.slots);
    if (slots == nullptr) return fail;
    a.warm();
    populateFileMappings();
    if (!resetPeakRss()) return fail;
    return a.run(w, slots);
  });
}

// The extra, untimed glibc run that samples mallinfo2 (every op on short workloads, about
// 1000 times plus at every growth of the break on long ones).
std::size_t measureGlibcHeld(const Workload& w) {
  const RunResult r = inChild([&] {
    RunResult out;
    void** slots = freshSlots(w.slots);
    if (slots == nullptr) return out;
    warmUp<GlibcMalloc>();
    const std::size_t every = std::max<std::size_t>(1, w.ops.size() / 1000);
    out.held = replaySampling(w.ops.data(), w.ops.size(), slots, every);
    out.ok = true;
    return out;
  });
  return r.ok ? r.held : 0;
}

using Options = strata::bench::TableOptions;

const strata::bench::TableProgram kProgram{
    "gp_table", "gp_table [--quick] [--runs N] [--csv] [--workload NAME] [--allocator NAME]",
    "small-churn mixed-phases growing large short-lived",
    "time and memory of the general-purpose allocators", true};

Options parse(int argc, char** argv) {
  return strata::bench::parseTableOptions(kProgram, argc, argv);
}

}  // namespace gp

int main(int argc, char** argv) {
  using namespace gp;
  const Options opt = parse(argc, argv);
  std::vector<Allocator> allocs = allocators();
  if (!opt.allocator.empty()) {
    std::erase_if(allocs, [&](const Allocator& a) { return a.name != opt.allocator; });
    if (allocs.empty())
      strata::bench::tableUsage(kProgram, ("no allocator named " + opt.allocator).c_str());
  }

  if (opt.csv) {
    std::printf("allocator,workload,runs,time_ms,held_bytes,held_exact,rss_bytes,"
                "peak_live_bytes,frag_held_pct,frag_rss_pct,failed_runs\n");
  } else {
    std::printf("General-purpose allocators: median of %d runs, each in a fresh child process\n",
                opt.runs);
    std::printf("held = peak bytes from the system (~ = glibc mallinfo2, sampled); RSS = peak "
                "resident growth\n\n");
    std::printf("%-18s %-13s %9s %9s %9s %9s %10s %9s\n", "allocator", "workload", "time ms",
                "held MiB", "RSS MiB", "live MiB", "frag held", "frag RSS");
  }

  bool anyFailed = false;
  bool matched = false;
  for (const WorkloadMaker& maker : workloads(opt.quick ? 0.05 : 1.0)) {
    if (!opt.workload.empty() && maker.name != opt.workload) continue;
    matched = true;
    const Workload w = maker.make();
    std::vector<std::vector<RunResult>> results(allocs.size());
    for (int r = 0; r < opt.runs; ++r) {
      for (std::size_t a = 0; a < allocs.size(); ++a) results[a].push_back(measure(allocs[a], w));
    }
    const double live = static_cast<double>(w.peakLiveBytes);
    for (std::size_t a = 0; a < allocs.size(); ++a) {
      std::vector<double> ms, held, rss;
      int failed = 0;
      for (const RunResult& r : results[a]) {
        if (!r.ok || r.failures != 0) {
          ++failed;
          continue;
        }
        ms.push_back(r.ms);
        held.push_back(static_cast<double>(r.held));
        rss.push_back(static_cast<double>(r.rss));
      }
      anyFailed = anyFailed || failed != 0;
      Row row{allocs[a].name, w.name, allocs[a].strata, ms.size(), failed};
      row.liveBytes = live;
      if (!ms.empty()) {
        row.ms = median(ms);
        row.rssBytes = median(rss);
        row.heldBytes = row.exact ? median(held) : static_cast<double>(measureGlibcHeld(w));
      }
      printRow(row, opt.csv);
    }
    if (!opt.csv) std::printf("\n");
  }
  if (!matched)
    strata::bench::tableUsage(kProgram, ("no workload named " + opt.workload).c_str());
  return anyFailed ? 1 : 0;
}
