// Inputs for the diff tests: traces with a program and sites written by hand (the trace
// writer), and compare folders (results.json, sites files, series files) written as text.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/process.hpp"
#include "strata/trace/writer.hpp"

namespace difftest {

namespace trace = strata::trace;
using strata::test::slurp;
using strata::test::TempDir;

// A site: its return addresses, innermost first.
using Stack = std::vector<std::uint64_t>;

// One allocation: which of the trace's stacks (index into `stacks`), its size, and whether it
// is freed right away (so it is not live at the peak).
struct Alloc {
  std::size_t stack = 0;
  std::uint64_t size = 0;
  bool freed = false;
};

// A trace of `program` whose sites are `stacks` (ids 1.. in that order), in a module
// "libapp.so" loaded at `base` (so the same offsets sit at other addresses in another run).
inline std::string writeTrace(const TempDir& dir, const std::string& name,
                              const std::string& program, const std::vector<Stack>& stacks,
                              const std::vector<Alloc>& allocs, std::uint64_t base = 0x10000) {
  std::vector<unsigned char> out, buf(1 << 16), sbuf(1 << 16);
  auto sink = [&out](const unsigned char* d, std::size_t n) {
    out.insert(out.end(), d, d + n);
    return true;
  };
  trace::TraceWriter<decltype(sink)> w(buf.data(), buf.size(), sink,
                                       trace::SiteBuffer{sbuf.data(), sbuf.size()});
  EXPECT_TRUE(w.program(100, 1, program.c_str()));
  static const char kModule[] = "/nonexistent/libapp.so";
  const trace::ModuleInfo m{.start = base,
                            .end = base + 0x10000,
                            .bias = base,
                            .path = kModule,
                            .pathLength = sizeof kModule - 1,
                            .buildId = nullptr,
                            .buildIdLength = 0};
  EXPECT_TRUE(w.addModules(&m, 1));
  std::vector<std::uint64_t> ids;
  for (Stack s : stacks) {
    for (std::uint64_t& f : s) f += base;
    ids.push_back(w.defineSite(s.data(), s.size()));
  }
  std::uint64_t id = 0;
  for (const Alloc& a : allocs) {
    trace::Event e;
    e.op = trace::Op::Malloc;
    e.size = a.size;
    e.site = ids.at(a.stack);
    EXPECT_NE(w.append(e), decltype(w)::kRejected);
    const std::uint64_t object = id++;
    if (!a.freed) continue;
    trace::Event f;
    f.op = trace::Op::Free;
    f.object = object;
    EXPECT_NE(w.append(f), decltype(w)::kRejected);
  }
  EXPECT_TRUE(w.finish());
  return dir.write(name, out).string();
}

// A results.json of `strata compare` with one trace `name` (peak live, total bytes) and two
// allocators (peak heaps given), each with a series file; `sitesFile` named when not empty.
inline std::string resultsJson(const std::string& name, const std::string& program,
                               std::uint64_t peak, std::uint64_t total, std::uint64_t heapGlibc,
                               std::uint64_t heapStrata, const std::string& sitesFile = "") {
  auto replay = [&](const std::string& alloc, std::uint64_t heap) {
    return "{\"allocator\": \"" + alloc +
           "\", \"status\": \"ok\", \"time_ms\": 12.5, \"peak_heap_bytes\": " +
           std::to_string(heap) + ", \"peak_live_bytes\": " + std::to_string(peak) +
           ", \"fragmentation_percent\": 20.0, \"series_file\": \"series/" + name + "-" + alloc +
           ".csv\"}";
  };
  return "{\"format\": \"strata-compare-1\", \"out_dir\": \"x\", \"traces\": [{\"name\": \"" +
         name + "\", \"path\": \"traces/" + name + ".trace\", \"stats_file\": \"" + name +
         "-stats.json\", " +
         (sitesFile.empty() ? std::string() : "\"sites_file\": \"" + sitesFile + "\", ") +
         "\"program\": \"" + program +
         "\", \"pid\": 1, \"stats\": {\"events\": 10, \"total_objects\": 5, " +
         "\"total_bytes\": " + std::to_string(total) +
         ", \"peak_live_bytes\": " + std::to_string(peak) + "}, \"results\": [" +
         replay("glibc", heapGlibc) + ", " + replay("strata", heapStrata) + "]}]}\n";
}

// A strata-sites-1 document: frames f0 "grow (app.c:10)", f1 "main (app.c:20)", f2 "keep
// (app.c:30)"; sites [f0, f1] and [f2, f1] with the given peak-live bytes (bytes = 2x).
inline std::string sitesJson(std::uint64_t growPeak, std::uint64_t keepPeak, bool swapped) {
  auto frame = [](const char* fn, int line) {
    return std::string("{\"function\": \"") + fn +
           "\", \"file\": \"app.c\", \"line\": " + std::to_string(line) +
           ", \"module\": \"app\", \"offset\": " + std::to_string(line * 16) + "}";
  };
  auto site = [](int id, const char* stack, std::uint64_t peak) {
    return "{\"id\": " + std::to_string(id) + ", \"stack\": " + stack +
           ", \"allocations\": 3, \"bytes\": " + std::to_string(2 * peak) +
           ", \"peak_live_bytes\": " + std::to_string(peak) + "}";
  };
  // Swapped: the frames in another order, so the indices differ but the stacks do not.
  const std::string frames =
      swapped ? frame("keep", 30) + ", " + frame("main", 20) + ", " + frame("grow", 10)
              : frame("grow", 10) + ", " + frame("main", 20) + ", " + frame("keep", 30);
  const std::string growStack = swapped ? "[2, 1]" : "[0, 1]",
                    keepStack = swapped ? "[0, 1]" : "[2, 1]";
  return "{\"format\": \"strata-sites-1\", \"trace\": \"t\", \"frames\": [" + frames +
         "], \"sites\": [" + site(1, growStack.c_str(), growPeak) + ", " +
         site(2, keepStack.c_str(), keepPeak) + "]}\n";
}

// A compare folder in `dir`/`folder`: results.json, its series files, and a sites file when
// `sites` is not empty.
inline std::string writeFolder(const TempDir& dir, const std::string& folder,
                               const std::string& results, const std::string& sites = "") {
  dir.write(folder + "/results.json", results);
  const std::string series =
      "seconds,event,heap_bytes,live_bytes\n0.1,1024,4096,100\n0.2,2048,8192,200\n";
  dir.write(folder + "/series/app-glibc.csv", series);
  dir.write(folder + "/series/app-strata.csv", series);
  if (!sites.empty()) dir.write(folder + "/app-sites.json", sites);
  return dir / folder;
}

}  // namespace difftest
