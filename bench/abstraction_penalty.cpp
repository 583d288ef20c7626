// abstraction_penalty: what do the layers cost? Times strata::KingsleyHeap<SbrkHeap<>> (five
// layers) against MonolithicKingsley (the same allocator written by hand as one class) on the
// same pre-generated operation sequences, and prints ns/op for each and their ratio.
//
//   abstraction_penalty                      all workloads, 21 interleaved rounds, a table
//   abstraction_penalty --rounds 31 --ops 4000000
//   abstraction_penalty --only layered --workload mixed-sizes --rounds 1 --ops 200000
//                                            one side only (bench/callgrind.sh uses this)
//
// Method: before timing, both heaps replay every workload once and must place every object
// at the same offset from their base (the same algorithm and layout, checked). Then each
// round times one replay of each heap, alternating which goes first, on a fresh heap each
// time; the heap is built and destroyed outside the clock. The table shows the median over
// the rounds and the median of the per-round ratios.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "monolithic_kingsley.hpp"
#include "strata/general/kingsley_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "workloads.hpp"

namespace penalty {

using Layered = strata::KingsleyHeap<strata::SbrkHeap<>>;
using Monolithic = strata::bench::MonolithicKingsley;
using strata::bench::Op;
using strata::bench::Workload;

// The replay loop, the only code that is timed (and that callgrind counts). Inlined into one
// function per heap, so each heap's malloc and free are inlined into its own loop.
template <class H>
[[gnu::always_inline]] inline void replayOps(H& heap, const Op* ops, std::size_t n,
                                             void** slots) {
  for (std::size_t i = 0; i < n; ++i) {
    const Op op = ops[i];
    if (op.size != 0) {
      slots[op.slot] = heap.malloc(op.size);
    } else {
      heap.free(slots[op.slot]);
    }
  }
}

[[gnu::noinline]] void replay_layered(Layered& heap, const Op* ops, std::size_t n,
                                      void** slots) {
  replayOps(heap, ops, n, slots);
}

[[gnu::noinline]] void replay_monolithic(Monolithic& heap, const Op* ops, std::size_t n,
                                         void** slots) {
  replayOps(heap, ops, n, slots);
}

void replay(Layered& h, const Op* ops, std::size_t n, void** slots) {
  replay_layered(h, ops, n, slots);
}
void replay(Monolithic& h, const Op* ops, std::size_t n, void** slots) {
  replay_monolithic(h, ops, n, slots);
}

// Nanoseconds per op of one replay on a fresh heap.
template <class H>
double timeOnce(const Workload& w, std::vector<void*>& slots) {
  H heap;
  const auto t0 = std::chrono::steady_clock::now();
  replay(heap, w.ops.data(), w.ops.size(), slots.data());
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() /
         static_cast<double>(w.ops.size());
}

// Where the heap puts things: a hash of every object's offset from the first one, and the
// peak the heap held. Equal digests mean the two heaps made the same decisions.
struct Placement {
  std::uint64_t hash = 1469598103934665603ULL;
  std::size_t peakHeld = 0;
  bool operator==(const Placement&) const = default;
};

template <class H>
Placement placement(const Workload& w, std::vector<void*>& slots) {
  H heap;
  Placement pl;
  const char* first = nullptr;
  for (const Op& op : w.ops) {
    if (op.size == 0) {
      heap.free(slots[op.slot]);
      continue;
    }
    void* p = heap.malloc(op.size);
    slots[op.slot] = p;
    if (first == nullptr) first = static_cast<const char*>(p);
    const auto off = static_cast<std::uint64_t>(static_cast<const char*>(p) - first);
    pl.hash = (pl.hash ^ off ^ heap.getSize(p)) * 1099511628211ULL;
  }
  pl.peakHeld = heap.peakBytesHeld();
  return pl;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

std::vector<Workload> makeWorkloads(std::size_t ops) {
  namespace b = strata::bench;
  const auto objects = static_cast<std::uint32_t>(std::clamp<std::size_t>(ops / 2, 1, 32768));
  const auto cycles = static_cast<std::uint32_t>(std::max<std::size_t>(1, ops / (2 * objects)));
  std::vector<Workload> all;
  all.push_back(b::slotChurn("same-size-churn", "40 B objects, random slot churn, ~2k live",
                             ops, 4096, 11, [](b::Rng&) { return 40u; }));
  all.push_back(b::slotChurn("mixed-sizes", "8 B..8 KiB log-uniform, random churn, ~2k live",
                             ops, 4096, 12, [](b::Rng& r) { return r.logUniform(8, 8192); }));
  all.push_back(b::allocAllFreeAll(
      "alloc-all-free-all", "32k objects 8..512 B, then all freed in random order; repeated",
      objects, cycles, 13, [](b::Rng& r) { return r.logUniform(8, 512); }));
  all.push_back(b::lifoPairs("lifo-pairs", "malloc then free at once, 8..256 B", ops, 14,
                             [](b::Rng& r) { return r.logUniform(8, 256); }));
  return all;
}

struct Options {
  std::string only;      // "", "layered" or "monolithic"
  std::string workload;  // "" = all
  int rounds = 21;
  std::size_t ops = 2'000'000;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "abstraction_penalty: %s\n"
               "usage: abstraction_penalty [--rounds N] [--ops N] [--workload NAME]\n"
               "                           [--only layered|monolithic]\n"
               "workloads: same-size-churn mixed-sizes alloc-all-free-all lifo-pairs\n",
               why);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value after " + a).c_str());
      return argv[++i];
    };
    if (a == "--only") {
      o.only = value();
      if (o.only != "layered" && o.only != "monolithic") {
        usage("--only takes layered or monolithic");
      }
    } else if (a == "--workload") {
      o.workload = value();
    } else if (a == "--rounds") {
      o.rounds = std::atoi(value().c_str());
      if (o.rounds < 1) usage("--rounds must be at least 1");
    } else if (a == "--ops") {
      o.ops = std::strtoull(value().c_str(), nullptr, 10);
      if (o.ops < 2) usage("--ops must be at least 2");
    } else if (a == "--help" || a == "-h") {
      usage("compare layered and hand-written Kingsley");
    } else {
      usage(("unknown argument " + a).c_str());
    }
  }
  return o;
}

}  // namespace penalty

int main(int argc, char** argv) {
  using namespace penalty;
  const Options opt = parse(argc, argv);
  std::vector<Workload> workloads = makeWorkloads(opt.ops);
  if (!opt.workload.empty()) {
    std::erase_if(workloads, [&](const Workload& w) { return w.name != opt.workload; });
    if (workloads.empty()) usage(("no workload named " + opt.workload).c_str());
  }

  if (!opt.only.empty()) {
    for (const Workload& w : workloads) {
      std::vector<void*> slots(w.slots);
      std::vector<double> ns;
      for (int r = 0; r < opt.rounds; ++r) {
        ns.push_back(opt.only == "layered" ? timeOnce<Layered>(w, slots)
                                           : timeOnce<Monolithic>(w, slots));
      }
      std::printf("%s %s: %.2f ns/op over %zu ops (median of %d)\n", opt.only.c_str(),
                  w.name.c_str(), median(ns), w.ops.size(), opt.rounds);
    }
    return 0;
  }

  std::printf("Abstraction penalty: KingsleyHeap<SbrkHeap<>> (layered) vs MonolithicKingsley\n");
  std::printf("%d interleaved rounds, fresh heap per replay, medians\n\n", opt.rounds);
  std::printf("%-20s %9s %10s %10s %8s %8s  %s\n", "workload", "ops", "layered", "monolithic",
              "ratio", "paired", "same placement");
  std::printf("%-20s %9s %10s %10s %8s %8s\n", "", "", "ns/op", "ns/op", "L/M", "L/M");
  bool allSame = true;
  for (const Workload& w : workloads) {
    std::vector<void*> slots(w.slots);
    const bool same = placement<Layered>(w, slots) == placement<Monolithic>(w, slots);
    allSame = allSame && same;
    std::vector<double> layered, mono, ratio;
    for (int r = 0; r < opt.rounds; ++r) {
      double l, m;
      if (r % 2 == 0) {
        l = timeOnce<Layered>(w, slots);
        m = timeOnce<Monolithic>(w, slots);
      } else {
        m = timeOnce<Monolithic>(w, slots);
        l = timeOnce<Layered>(w, slots);
      }
      layered.push_back(l);
      mono.push_back(m);
      ratio.push_back(l / m);
    }
    const double lm = median(layered), mm = median(mono);
    std::printf("%-20s %9zu %10.2f %10.2f %8.3f %8.3f  %s\n", w.name.c_str(), w.ops.size(), lm,
                mm, lm / mm, median(ratio), same ? "yes" : "NO");
  }
  if (!allSame) {
    std::printf("\nThe heaps placed objects differently: the comparison is not like for like.\n");
    return 1;
  }
  return 0;
}
