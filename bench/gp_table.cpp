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
// The fork/pipe and /proc machinery is in measure.hpp, shared with region_table.
#include <malloc.h>
#include <unistd.h>

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

// glibc malloc as a heap, so one replay loop serves every allocator.
struct GlibcMalloc {
  void* malloc(std::size_t n) noexcept { return std::malloc(n); }
  void free(void* p) noexcept { std::free(p); }
};

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

// What glibc holds from the system (sbrk'd arena + mmapped blocks) and what of it is in use,
// from mallinfo2(); zero where glibc is too old to have it.
struct GlibcInfo {
  std::size_t held = 0;
  std::size_t inUse = 0;
};

GlibcInfo glibcInfo() noexcept {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 mi = ::mallinfo2();
  return {mi.arena + mi.hblkhd, mi.uordblks + mi.hblkhd};
#else
  return {};
#endif
}

// The replay loop for glibc once more, untimed, sampling mallinfo2(): the closest glibc
// comes to saying what it holds. mallinfo2 walks glibc's free lists (up to milliseconds),
// so it is sampled every `every` ops and whenever the program break has grown past its
// highest point so far (sbrk(0) is a cheap read; the arena grows only there). The peak is
// counted from what was in use before the run, so free space glibc already had counts as
// held by this run, as it would for a fresh heap. A peak between samples can be missed.
std::size_t replaySampling(const Op* ops, std::size_t n, void** slots, std::size_t every) {
  GlibcMalloc heap;
  const std::size_t base = glibcInfo().inUse;
  std::size_t peak = glibcInfo().held;
  const char* highestBreak = static_cast<const char*>(::sbrk(0));
  for (std::size_t i = 0; i < n; ++i) {
    const Op op = ops[i];
    if (op.size != 0) {
      void* p = heap.malloc(op.size);
      slots[op.slot] = p;
      if (p != nullptr) std::memset(p, 1, op.size);
    } else {
      heap.free(slots[op.slot]);
    }
    const char* brk = static_cast<const char*>(::sbrk(0));
    if (i % every == 0 || brk > highestBreak) {
      highestBreak = std::max(highestBreak, brk);
      peak = std::max(peak, glibcInfo().held);
    }
  }
  return peak > base ? peak - base : 0;
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

// A workload by name, generated only when asked for.
struct WorkloadMaker {
  std::string name;
  std::function<Workload()> make;
};

// The workloads, scaled: 1.0 for the full table, about 1/20 for --quick.
std::vector<WorkloadMaker> workloads(double scale) {
  namespace b = strata::bench;
  auto n = [scale](double full) { return static_cast<std::size_t>(std::max(full * scale, 64.0)); };
  std::vector<WorkloadMaker> all;
  all.push_back({"small-churn", [=] {
    return b::slotChurn("small-churn", "40 B objects, random churn over 200k slots", n(6e6),
                        static_cast<std::uint32_t>(n(2e5)), 101, [](b::Rng&) { return 40u; });
  }});
  all.push_back({"mixed-phases", [=] {
    // Six phases, each drawing sizes from its own 4x window, in the order 512-2048 B,
    // 16-64 B, 128-512 B, 32-128 B, 256-1024 B, 64-256 B. 2 % of the objects live to the
    // end, the rest ~20000 allocations: when a phase ends its memory is free but for the
    // long-lived objects in it, and a heap that cannot reuse it for the next phase's sizes
    // keeps all of it.
    const std::size_t allocs = n(1.2e6);
    return b::lifetimes("mixed-phases", "16 B..2 KiB in 6 phases, 2% long-lived", allocs, 102,
                        [allocs, scale](b::Rng& r, std::uint64_t t) {
                          constexpr unsigned kWindow[6] = {5, 0, 3, 1, 4, 2};
                          const std::uint32_t lo = 16u << kWindow[6 * t / allocs];
                          const std::uint32_t size = r.logUniform(lo, 4 * lo);
                          const std::uint64_t life =
                              r.chance(0.02) ? b::kForever : r.geometric(20000 * scale);
                          return std::pair{size, life};
                        });
  }});
  all.push_back({"growing", [=] {
    // Half of the objects are kept to the end: the live set grows steadily to ~115 MiB.
    return b::lifetimes("growing", "16 B..1 KiB, half kept: live set grows", n(1e6), 103,
                        [](b::Rng& r, std::uint64_t) {
                          const std::uint64_t life = r.chance(0.5) ? b::kForever : r.geometric(200);
                          return std::pair{r.logUniform(16, 1024), life};
                        });
  }});
  all.push_back({"large", [=] {
    return b::slotChurn("large", "16 KiB..1 MiB, random churn over 32 slots", n(6000), 32, 104,
                        [](b::Rng& r) { return r.logUniform(16 << 10, 1 << 20); });
  }});
  all.push_back({"short-lived", [=] {
    // cfrac/espresso-like: tiny objects that die young, a few that do not.
    return b::lifetimes("short-lived", "8..128 B, mean life 30 allocations, 0.5% kept", n(3e6),
                        105, [](b::Rng& r, std::uint64_t) {
                          const std::uint64_t life =
                              r.chance(0.005) ? b::kForever : r.geometric(30);
                          return std::pair{r.logUniform(8, 128), life};
                        });
  }});
  return all;
}

using Options = strata::bench::TableOptions;

const strata::bench::TableProgram kProgram{
    "gp_table", "gp_table [--quick] [--runs N] [--csv] [--workload NAME] [--allocator NAME]",
    "small-churn mixed-phases growing large short-lived",
    "time and memory of the general-purpose allocators", true};

Options parse(int argc, char** argv) {
  return strata::bench::parseTableOptions(kProgram, argc, argv);
}

constexpr double kMiB = 1024.0 * 1024.0;

double fragPercent(double held, double live) { return live > 0 ? (held / live - 1) * 100 : 0; }

// One line of the table: the medians of one allocator on one workload.
struct Row {
  std::string allocator, workload;
  bool exact;          // held is exact (a Strata heap) rather than sampled
  std::size_t runs;    // runs that succeeded
  int failed;          // runs that crashed or ran out of memory
  double ms = 0, heldBytes = 0, rssBytes = 0, liveBytes = 0;
};

// Prints a row as text or CSV. A sampled held of 0 means the C library could not say (no
// mallinfo2, or a sanitizer's allocator in its place): shown as n/a, not as 0.
void printRow(const Row& r, bool csv) {
  const bool heldKnown = r.exact || r.heldBytes > 0;
  if (csv) {
    char held[32] = "", heldFrag[32] = "";
    if (heldKnown) {
      std::snprintf(held, sizeof held, "%.0f", r.heldBytes);
      std::snprintf(heldFrag, sizeof heldFrag, "%.1f", fragPercent(r.heldBytes, r.liveBytes));
    }
    std::printf("%s,%s,%zu,%.3f,%s,%d,%.0f,%.0f,%s,%.1f,%d\n", r.allocator.c_str(),
                r.workload.c_str(), r.runs, r.ms, held, r.exact ? 1 : 0, r.rssBytes,
                r.liveBytes, heldFrag, fragPercent(r.rssBytes, r.liveBytes), r.failed);
    return;
  }
  if (r.runs == 0) {
    std::printf("%-18s %-13s   FAILED in all %d runs (crash or out of memory)\n",
                r.allocator.c_str(), r.workload.c_str(), r.failed);
    return;
  }
  char held[32], frag[32];
  if (heldKnown) {
    std::snprintf(held, sizeof held, "%s%8.2f", r.exact ? " " : "~", r.heldBytes / kMiB);
    std::snprintf(frag, sizeof frag, "%9.0f%%", fragPercent(r.heldBytes, r.liveBytes));
  } else {
    std::snprintf(held, sizeof held, "%9s", "n/a");
    std::snprintf(frag, sizeof frag, "%10s", "n/a");
  }
  std::printf("%-18s %-13s %9.1f %s %9.2f %9.2f %s %8.0f%%", r.allocator.c_str(),
              r.workload.c_str(), r.ms, held, r.rssBytes / kMiB, r.liveBytes / kMiB, frag,
              fragPercent(r.rssBytes, r.liveBytes));
  if (r.failed != 0) std::printf("  (%d runs failed)", r.failed);
  std::printf("\n");
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
