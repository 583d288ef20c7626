// replay_harness: what the replay harness itself costs. Builds a
// realistic trace in memory (default 10 million events: mostly small objects, most freed soon
// after allocation, some long-lived, occasional reallocs and large blocks), then replays it
// in this process with toolkit/replay's engine, one thread, in two ways:
//   - on the do-nothing allocator with object writes off: the harness alone, in events/s
//     (target >= 100 M events/s);
//   - on glibc's malloc with object writes on, as `strata replay --allocator glibc` would;
// each the median of --runs runs, and prints the harness share = none time / glibc time
// (target < 10 %). Decoding the trace is not part of either time (the engine pauses its
// clocks while it decodes the next window), as in a real replay.
//
// With --workload NAME the trace is instead one of the bundled workloads
// (tracetools::generateWorkload: web-proxy, editor, server) of about N events, replayed on
// one thread.
//
//   replay_harness [--events N] [--runs R] [--seed S] [--workload NAME]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "replay/engine.hpp"
#include "strata/trace/writer.hpp"
#include "../toolkit/tracetools/workloads.hpp"  // not bench/workloads.hpp beside this file

namespace {

using namespace strata;

// A TraceWriter sink appending to a byte vector.
struct VectorSink {
  std::vector<unsigned char>* out;
  bool operator()(const unsigned char* d, std::size_t n) {
    out->insert(out->end(), d, d + n);
    return true;
  }
};

// Generates `events` events of a program-like mix and returns the finished trace. Live
// objects: a stack of short-lived ones (freed mostly last-in first-out) and a pool of
// long-lived ones replaced at random; about half the events allocate.
std::vector<unsigned char> makeTrace(std::uint64_t events, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<unsigned char> out;
  out.reserve(events * 5);
  std::vector<unsigned char> buf(1 << 20);
  trace::TraceWriter<VectorSink> w(buf.data(), buf.size(), VectorSink{&out});
  struct Obj {
    std::uint64_t id;
    bool isNew;
  };
  std::vector<Obj> recent, pool;
  const std::size_t poolSize = 20000;
  auto size = [&]() -> std::uint64_t {
    const unsigned r = static_cast<unsigned>(rng() % 1000);
    if (r < 700) return 8 + rng() % 120;       // small
    if (r < 980) return 128 + rng() % 2000;    // medium
    return 4096 + rng() % 60000;               // large
  };
  trace::Event e;
  std::uint64_t t = 0;
  for (std::uint64_t i = 0; i < events; ++i) {
    e = trace::Event{};
    e.timeNs = (t += 50 + rng() % 200);
    const unsigned r = static_cast<unsigned>(rng() % 100);
    const bool allocate = recent.empty() || (r < 50 && recent.size() < 4096) || recent.size() < 8;
    if (allocate) {
      e.size = size();
      const unsigned kind = static_cast<unsigned>(rng() % 100);
      bool isNew = false;
      if (kind < 60) e.op = trace::Op::Malloc;
      else if (kind < 65) e.op = trace::Op::Calloc;
      else if (kind < 67) { e.op = trace::Op::Memalign; e.flags = trace::kFlagAligned; e.alignLog2 = 6; }
      else { e.op = trace::Op::New; isNew = true; }
      const std::uint64_t id = w.append(e);
      if (rng() % 100 < 3) {
        if (pool.size() < poolSize) {
          pool.push_back({id, isNew});
        } else {
          // Replace a random long-lived object: free it now.
          Obj& victim = pool[rng() % pool.size()];
          recent.push_back(victim);
          victim = {id, isNew};
        }
      } else {
        recent.push_back({id, isNew});
      }
    } else {
      // Free (or realloc) a recent object: usually the newest, sometimes an older one.
      const std::size_t k = rng() % 4 == 0 ? rng() % recent.size() : recent.size() - 1;
      const Obj o = recent[k];
      recent[k] = recent.back();
      recent.pop_back();
      if (!o.isNew && r < 55) {
        e.op = trace::Op::Realloc;
        e.target = o.id;
        e.size = size();
        recent.push_back({w.append(e), false});
      } else {
        e.op = o.isNew ? trace::Op::Delete : trace::Op::Free;
        e.object = o.id;
        w.append(e);
      }
    }
  }
  w.finish();
  return out;
}

// Parses a decimal option value or exits with a message.
std::uint64_t number(const char* s, const char* what) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s, &end, 10);
  if (end == s || *end != '\0') {
    std::fprintf(stderr, "replay_harness: %s needs a number, got '%s'\n", what, s);
    std::exit(2);
  }
  return v;
}

// The bundled workload NAME of about `events` events, generated into a temporary file and
// read back into memory.
std::vector<unsigned char> workloadTrace(const std::string& name, std::uint64_t events,
                                         std::uint64_t seed) {
  const std::filesystem::path tmp =
      std::filesystem::temp_directory_path() / ("replay_harness_" + name + ".trace");
  tracetools::generateWorkload(name, seed, static_cast<double>(events) / 1e6, tmp.string());
  std::ifstream in(tmp, std::ios::binary);
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  std::filesystem::remove(tmp);
  return bytes;
}

// The middle value (the upper middle for an even count).
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

// Builds the trace, replays it on none and on glibc, prints the table.
int main(int argc, char** argv) {
  std::uint64_t events = 10'000'000, runs = 5, seed = 1;
  std::string workload;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--events" && i + 1 < argc) events = number(argv[++i], "--events");
    else if (a == "--runs" && i + 1 < argc) runs = number(argv[++i], "--runs");
    else if (a == "--seed" && i + 1 < argc) seed = number(argv[++i], "--seed");
    else if (a == "--workload" && i + 1 < argc) workload = argv[++i];
    else {
      std::fprintf(stderr, "usage: replay_harness [--events N] [--runs R] [--seed S] [--workload NAME]\n");
      return 2;
    }
  }
  if (runs == 0) runs = 1;
  std::vector<unsigned char> trace;
  if (workload.empty()) {
    trace = makeTrace(events, seed);
  } else {
    try {
      trace = workloadTrace(workload, events, seed);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "replay_harness: %s\n", e.what());
      return 1;
    }
  }
  std::printf("trace%s%s: %.1f MB\n", workload.empty() ? "" : " ", workload.c_str(),
              static_cast<double>(trace.size()) / 1e6);

  struct Mode {
    const char* name;
    replay::EngineOptions options;
    std::vector<double> wall, cpu;
    replay::ReplayResult last;
  };
  Mode none{"none, writes off", {}, {}, {}, {}};
  none.options.allocator = replay::EngineAllocator::None;
  none.options.writeObjects = false;
  Mode glibc{"glibc, writes on", {}, {}, {}, {}};
  for (Mode* m : {&none, &glibc}) {
    m->options.threads = 1;
    m->options.collectSeries = false;
    for (std::uint64_t r = 0; r < runs; ++r) {
      m->last = replay::replayMemory(trace.data(), trace.size(), m->options);
      if (m->last.status != replay::ReplayStatus::Ok) {
        std::fprintf(stderr, "replay_harness: %s: %s %s\n", m->name, replay::statusName(m->last.status),
                     m->last.detail.c_str());
        return 1;
      }
      m->wall.push_back(m->last.wallSeconds);
      m->cpu.push_back(m->last.cpuSeconds);
    }
  }
  // Rates use the events actually replayed (a bundled workload's count is approximate).
  events = none.last.events;
  std::printf("%llu events (%.2f bytes/event)\n", static_cast<unsigned long long>(events),
              static_cast<double>(trace.size()) / static_cast<double>(events));
  std::printf("\n%-20s %12s %12s %16s %14s\n", "replay", "wall (s)", "cpu (s)", "events/s",
              "ns/event");
  for (const Mode* m : {&none, &glibc}) {
    const double w = median(m->wall);
    std::printf("%-20s %12.4f %12.4f %14.1f M %14.2f\n", m->name, w, median(m->cpu),
                static_cast<double>(events) / w / 1e6, w * 1e9 / static_cast<double>(events));
  }
  // Both clocks: on a shared machine the wall time includes time the replay thread waited for
  // a core, which the CPU time does not.
  const double share = median(none.wall) / median(glibc.wall) * 100.0;
  const double cpuShare = median(none.cpu) / median(glibc.cpu) * 100.0;
  std::printf("\nharness share (none / glibc, median of %llu): wall %.1f %%, cpu %.1f %%  "
              "(target < 10 %%)\n",
              static_cast<unsigned long long>(runs), share, cpuShare);
  std::printf("harness speed: wall %.0f M events/s, cpu %.0f M events/s  (target >= 100 M events/s)\n",
              static_cast<double>(events) / median(none.wall) / 1e6,
              static_cast<double>(events) / median(none.cpu) / 1e6);
  std::printf("glibc: peak live %.1f MB, objects %llu\n",
              static_cast<double>(glibc.last.peakLiveBytes) / 1e6,
              static_cast<unsigned long long>(glibc.last.objects));
  return 0;
}
