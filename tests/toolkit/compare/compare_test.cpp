// `strata compare` as a user runs it: the built executable with arguments, checked through its
// exit status, its tables on stdout, and the files it leaves (results.json parsed and matched
// against the tables, report.txt, every plot as a real PNG and SVG); plots.py run on a
// hand-made results.json; and bad input (unknown allocator, missing or corrupt trace, a
// Python without matplotlib). Runs that preload an allocator are skipped under sanitizers.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/process.hpp"
#include "common/require.hpp"
#include "json.hpp"
#include "strata/trace/format.hpp"
#include "strata/trace/writer.hpp"
#include "tracetools/workloads.hpp"

namespace {

namespace fs = std::filesystem;

// ---- running the command ---------------------------------------------------------------

using strata::test::slurp;
using strata::test::TempDir;
using Result = strata::test::RunResult;
using Env = strata::test::EnvChanges;
using strata::test::Json;
using strata::test::parseJsonFile;
using strata::test::JsonParser;

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Runs `exe` with `args` and the environment changes `env`, with STRATA_LIB_DIR and
// STRATA_PYTHON unset unless `env` sets them.
Result runProgram(const std::string& exe, const std::vector<std::string>& args, const Env& env) {
  Env all{{"STRATA_LIB_DIR", std::nullopt}, {"STRATA_PYTHON", std::nullopt}};
  all.insert(all.end(), env.begin(), env.end());
  return strata::test::runProgram(exe, args, all);
}

// Runs `strata compare ARGS...` (the built executable) with the environment changes `env`.
Result run(std::vector<std::string> args, const Env& env = {}) {
  args.insert(args.begin(), "compare");
  return runProgram(STRATA_CLI_PATH, args, env);
}

// ---- inputs ------------------------------------------------------------------------------

// Writes a small valid trace: `objects` mallocs of varied sizes on one thread, each freed
// 64 allocations later (so about 64 are live), the rest freed at the end.
void writeTrace(const fs::path& path, int objects) {
  using namespace strata::trace;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::vector<unsigned char> buffer(1 << 16);
  {
    TraceWriter<FdSink> w(buffer.data(), buffer.size(), FdSink{fileno(f)});
    std::vector<std::uint64_t> ids;
    std::uint64_t t = 0;
    for (int i = 0; i < objects; ++i) {
      Event e;
      e.op = Op::Malloc;
      e.size = 16 + static_cast<std::uint64_t>((i * 37) % 3000);
      e.timeNs = t += 100;
      ids.push_back(w.append(e));
      if (i >= 64) {
        Event fr;
        fr.op = Op::Free;
        fr.object = ids[static_cast<std::size_t>(i - 64)];
        fr.timeNs = t += 50;
        w.append(fr);
      }
    }
    for (std::size_t i = ids.size() >= 64 ? ids.size() - 64 : 0; i < ids.size(); ++i) {
      Event fr;
      fr.op = Op::Free;
      fr.object = ids[i];
      fr.timeNs = t += 50;
      w.append(fr);
    }
    ASSERT_TRUE(w.finish());
  }
  std::fclose(f);
}

// True when `p` starts with the PNG signature and is more than a header.
bool isPng(const fs::path& p) {
  const std::string s = slurp(p);
  return s.size() > 1000 && s.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0;
}

// True when `p` is an SVG document: an <svg root element, closed at the end.
bool isSvg(const fs::path& p) {
  const std::string s = slurp(p);
  return contains(s, "<svg") && contains(s, "</svg>");
}

// A Python that imports matplotlib, as compare looks for one; empty when none.
std::string pythonWithMatplotlib() {
  for (const char* py : {"/usr/bin/python3"}) {
    const std::string cmd = std::string(py) + " -c 'import matplotlib' >/dev/null 2>&1";
    if (std::system(cmd.c_str()) == 0) return py;
  }
  return {};
}

const std::vector<std::string> kPlotKinds = {"heap", "sizes", "lifetimes", "summary"};

// The table rows of `trace`'s block in compare's stdout: allocator name -> status (the last
// word of its line). The block starts at "== trace" and ends at the next blank line after the
// table.
std::map<std::string, std::string> tableRows(const std::string& out, const std::string& trace) {
  std::map<std::string, std::string> rows;
  const std::size_t start = out.find("== " + trace);
  if (start == std::string::npos) return rows;
  std::istringstream in(out.substr(start));
  std::string line;
  bool inTable = false;
  while (std::getline(in, line)) {
    if (line.find("allocator") != std::string::npos && line.find("status") != std::string::npos) {
      inTable = true;
      continue;
    }
    if (!inTable) continue;
    if (line.find_first_not_of(' ') == std::string::npos) break;
    std::istringstream words(line);
    std::string first, w, last;
    words >> first;
    while (words >> w) last = w;
    rows[first] = last;
  }
  return rows;
}

// Checks the files compare leaves in `dir` for the given traces and allocators: results.json
// parses and has one result per allocator per trace with the expected status, matching the
// table on stdout; report.txt holds the tables; the series of every finished allocator exists;
// and (when `plots`) every plot is a real PNG and SVG.
[[maybe_unused]] void checkOutput(const Result& r, const fs::path& dir,
                                  const std::vector<std::string>& traces,
                                  const std::vector<std::string>& allocators, unsigned runs,
                                  bool plots) {
  const Json results = parseJsonFile(dir / "results.json");
  ASSERT_EQ(results["traces"].kind, Json::Array);
  ASSERT_EQ(results["traces"].array.size(), traces.size());
  EXPECT_EQ(results["runs"].number, runs);
  const std::string report = slurp(dir / "report.txt");
  for (std::size_t t = 0; t < traces.size(); ++t) {
    const Json& tr = results["traces"].array[t];
    EXPECT_EQ(tr["name"].string, traces[t]);
    EXPECT_GT(tr["stats"]["events"].number, 0);
    EXPECT_TRUE(fs::exists(dir / tr["stats_file"].string)) << tr["stats_file"].string;
    const std::map<std::string, std::string> rows = tableRows(r.out, traces[t]);
    EXPECT_EQ(tableRows(report, traces[t]), rows) << "report.txt differs from stdout";
    ASSERT_EQ(tr["results"].array.size(), allocators.size()) << traces[t];
    bool sawFastest = false;
    for (std::size_t a = 0; a < allocators.size(); ++a) {
      const Json& res = tr["results"].array[a];
      SCOPED_TRACE(traces[t] + " / " + allocators[a]);
      EXPECT_EQ(res["allocator"].string, allocators[a]);
      EXPECT_EQ(res["status"].string, "ok") << res["detail"].string;
      EXPECT_EQ(rows.count(allocators[a]) ? rows.at(allocators[a]) : "(no row)", "ok");
      EXPECT_EQ(res["wall_seconds_runs"].array.size(), runs);
      EXPECT_GT(res["time_ms"].number, 0);
      EXPECT_GE(res["ratio"].number, 1.0);
      if (res["ratio"].number == 1.0) sawFastest = true;
      EXPECT_GT(res["peak_live_bytes"].number, 0);
      EXPECT_EQ(res["peak_live_bytes"].number, tr["stats"]["peak_live_bytes"].number);
      EXPECT_GE(res["peak_heap_bytes"].number, res["peak_live_bytes"].number);
      EXPECT_EQ(res["events"].number, tr["stats"]["events"].number);
      ASSERT_FALSE(res["series_file"].string.empty());
      const std::string series = slurp(dir / res["series_file"].string);
      EXPECT_TRUE(series.starts_with("seconds,event,heap_bytes,live_bytes\n"))
          << series.substr(0, 80);
      EXPECT_GT(std::count(series.begin(), series.end(), '\n'), 2);
    }
    EXPECT_TRUE(sawFastest) << "no allocator has ratio 1.00";
    if (plots) {
      for (const std::string& kind : kPlotKinds) {
        const fs::path base = dir / (traces[t] + "-" + kind);
        EXPECT_TRUE(isPng(base.string() + ".png")) << base << ".png";
        EXPECT_TRUE(isSvg(base.string() + ".svg")) << base << ".svg";
      }
    }
  }
  // No series files of the runs not kept.
  for (const auto& e : fs::directory_iterator(dir / "series"))
    EXPECT_FALSE(contains(e.path().filename().string(), ".run")) << e.path();
}

// ---- bad input (every build) ----------------------------------------------------------------

TEST(CompareArgs, UnknownAllocatorExits2ListingTheKnownOnes) {
  TempDir tmp;
  const Result r = run({"--allocators", "glibc,nosuchmalloc", "--out", tmp.path() / "out"});
  EXPECT_EQ(r.exitCode(), 2);
  EXPECT_TRUE(contains(r.err, "unknown allocator 'nosuchmalloc'")) << r.err;
  for (const char* name : {"glibc", "jemalloc", "mimalloc", "tcmalloc", "strata-kingsley",
                           "strata-lea", "strata", "strata-secure"})
    EXPECT_TRUE(contains(r.err, name)) << r.err;
  EXPECT_FALSE(fs::exists(tmp.path() / "out"))
      << "nothing is done before the arguments are checked";
}

TEST(CompareArgs, WrongOptionsExit2WithTheUsage) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--runs", "0"}, {"--runs"}, {"--bogus"},
                                             {"--size", "-1"}, {"--heap-limit", "12Q"},
                                             {"x.trace", "--", "true"}, {"--"}}) {
    const Result r = run(args);
    EXPECT_EQ(r.exitCode(), 2) << args[0];
    EXPECT_TRUE(contains(r.err, "strata compare: ")) << r.err;
    EXPECT_TRUE(contains(r.err, "usage: strata compare")) << r.err;
  }
}

TEST(CompareArgs, NonexistentTraceExits1NamingIt) {
  TempDir tmp;
  const std::string missing = (tmp.path() / "no-such.trace").string();
  const Result r = run({missing, "--allocators", "glibc", "--out", tmp.path() / "out"});
  EXPECT_EQ(r.exitCode(), 1);
  EXPECT_TRUE(contains(r.err, missing)) << r.err;
  EXPECT_TRUE(contains(r.err, "No such file")) << r.err;
}

TEST(CompareArgs, TruncatedTraceExits1NamingFileAndOffset) {
  TempDir tmp;
  const fs::path trace = tmp.path() / "cut.trace";
  writeTrace(trace, 2000);
  const std::string whole = slurp(trace);
  std::ofstream(trace, std::ios::binary | std::ios::trunc) << whole.substr(0, whole.size() / 2);
  const Result r = run({trace.string(), "--allocators", "glibc", "--out", tmp.path() / "out"});
  EXPECT_EQ(r.exitCode(), 1);
  EXPECT_TRUE(contains(r.err, trace.string())) << r.err;
  EXPECT_TRUE(contains(r.err, "offset")) << r.err;
}

// A valid trace in which nothing is allocated (a program that never called malloc): there is
// nothing to judge the allocators on, and compare says so instead of printing a table of zeros.
TEST(CompareArgs, TraceWithoutObjectsExits1SayingSo) {
  TempDir tmp;
  const fs::path trace = tmp.path() / "empty.trace";
  writeTrace(trace, 0);
  const Result r = run({trace.string(), "--allocators", "glibc", "--out", tmp.path() / "out"});
  EXPECT_EQ(r.exitCode(), 1);
  EXPECT_TRUE(contains(r.err, trace.string())) << r.err;
  EXPECT_TRUE(contains(r.err, "nothing to compare")) << r.err;
  EXPECT_FALSE(contains(r.out, "allocator ")) << r.out;
}

// ---- plots.py alone, on a hand-made results.json ---------------------------------------------

// Writes a results.json with one trace, two finished allocators with series and one
// unavailable, as compare would.
void writeHandMadeResults(const fs::path& dir) {
  fs::create_directories(dir / "series");
  for (const char* name : {"glibc", "strata"}) {
    std::ofstream csv(dir / "series" / (std::string("demo-") + name + ".csv"));
    csv << "seconds,event,heap_bytes,live_bytes\n";
    for (int i = 0; i <= 5000; i += 10)
      csv << i * 1e-6 << "," << i << "," << (i + 100) * (name[0] == 'g' ? 3000 : 2500) << ","
          << i * 2000 << "\n";
  }
  std::ofstream(dir / "results.json") << R"({"format": "strata-compare-1", "traces": [
    {"name": "demo", "stats": {"events": 5000, "total_objects": 2500, "peak_live_bytes": 10000000,
       "sizes_log2": [0, 0, 0, 3, 40, 200, 100, 7], "lifetime_bytes_log2": [1, 2, 4, 8, 16, 8],
       "lifetime_ns_log2": [0, 0, 0, 0, 0, 0, 3, 30, 300, 30]},
     "results": [
       {"allocator": "glibc", "status": "ok", "ratio": 1.0, "fragmentation_percent": 50.5,
        "series_file": "series/demo-glibc.csv"},
       {"allocator": "strata", "status": "ok", "ratio": 1.25, "fragmentation_percent": 25.0,
        "series_file": "series/demo-strata.csv"},
       {"allocator": "tcmalloc", "status": "unavailable", "series_file": ""}]}]}
)";
}

TEST(PlotScript, DrawsEveryPlotFromAHandMadeResultsFile) {
  const std::string python = pythonWithMatplotlib();
  if (python.empty())
    STRATA_SKIP_OR_FAIL("no /usr/bin/python3 with matplotlib (Debian package: python3-matplotlib)");
  TempDir tmp;
  writeHandMadeResults(tmp.path());
  const Result r = runProgram(python, {STRATA_PLOTS_PATH, tmp.path()}, {});
  ASSERT_EQ(r.exitCode(), 0) << r.err;
  for (const std::string& kind : kPlotKinds) {
    EXPECT_TRUE(isPng(tmp.path() / ("demo-" + kind + ".png"))) << kind;
    EXPECT_TRUE(isSvg(tmp.path() / ("demo-" + kind + ".svg"))) << kind;
  }
  // The heap plot has a line per finished allocator and the live area, named in its legend;
  // the summary names the allocator it could not show.
  const std::string heap = slurp(tmp.path() / "demo-heap.svg");
  EXPECT_TRUE(contains(heap, "glibc heap")) << "legend";
  EXPECT_TRUE(contains(heap, "strata heap"));
  EXPECT_TRUE(contains(heap, "live bytes"));
  EXPECT_TRUE(contains(slurp(tmp.path() / "demo-summary.svg"), "not shown: tcmalloc"));
}

TEST(PlotScript, UnreadableResultsExit1NamingTheFile) {
  const std::string python = pythonWithMatplotlib();
  if (python.empty())
    STRATA_SKIP_OR_FAIL("no /usr/bin/python3 with matplotlib (Debian package: python3-matplotlib)");
  TempDir tmp;
  std::ofstream(tmp.path() / "results.json") << "{\"traces\": [";
  const Result r = runProgram(python, {STRATA_PLOTS_PATH, tmp.path()}, {});
  EXPECT_EQ(r.exitCode(), 1);
  EXPECT_TRUE(contains(r.err, (tmp.path() / "results.json").string())) << r.err;
}

// ---- compare end to end, on glibc only (nothing preloaded: runs in every build) -------------

TEST(CompareGlibc, PythonWithoutMatplotlibExits3WithTheTableWritten) {
  TempDir tmp;
  const fs::path trace = tmp.path() / "small.trace";
  writeTrace(trace, 3000);
  // A "Python" that fails every import, as one without matplotlib does.
  const fs::path fake = tmp.path() / "fake-python";
  std::ofstream(fake) << "#!/bin/sh\necho 'ModuleNotFoundError: matplotlib' >&2\nexit 1\n";
  fs::permissions(fake, fs::perms::owner_all);
  const fs::path out = tmp.path() / "out";
  const Result r = run({trace.string(), "--allocators", "glibc", "--runs", "1", "--out", out},
                       {{"STRATA_PYTHON", fake.string()}});
  EXPECT_EQ(r.exitCode(), 3) << r.err;
  EXPECT_TRUE(contains(r.err, "plots need python3-matplotlib (apt-get install python3-matplotlib)"))
      << r.err;
  EXPECT_TRUE(contains(r.err, (out / "report.txt").string())) << r.err;
  EXPECT_EQ(tableRows(slurp(out / "report.txt"), "small"),
            (std::map<std::string, std::string>{{"glibc", "ok"}}));
  EXPECT_FALSE(fs::exists(out / "small-heap.png"));
}

TEST(CompareGlibc, GivenTraceFileTwoRunsJsonOnStdout) {
  TempDir tmp;
  const fs::path trace = tmp.path() / "given.trace";
  writeTrace(trace, 4000);
  const fs::path out = tmp.path() / "out";
  const Result r = run({trace.string(), "--allocators", "glibc", "--runs", "2", "--no-plots",
                        "--json", "--out", out});
  ASSERT_EQ(r.exitCode(), 0) << r.err;
  // stdout is exactly results.json; the tables are in report.txt.
  EXPECT_EQ(r.out, slurp(out / "results.json"));
  const Json j = JsonParser(r.out).parse();
  ASSERT_EQ(j["traces"].array.size(), 1u);
  const Json& res = j["traces"].array[0]["results"].array.at(0);
  EXPECT_EQ(res["status"].string, "ok");
  EXPECT_EQ(res["wall_seconds_runs"].array.size(), 2u);
  EXPECT_EQ(res["objects"].number, 4000);
  EXPECT_EQ(j["traces"].array[0]["stats"]["total_objects"].number, 4000);
  EXPECT_EQ(tableRows(slurp(out / "report.txt"), "given"),
            (std::map<std::string, std::string>{{"glibc", "ok"}}));
  // Not a terminal: one plain line per trace, no progress bar redraws.
  EXPECT_FALSE(contains(r.err, "\r")) << r.err;
  EXPECT_TRUE(contains(r.err, "given (1/1): replaying on 1 allocators")) << r.err;
}

TEST(CompareGlibc, ProgressBarOnlyOnATerminal) {
  if (std::system("command -v script >/dev/null 2>&1") != 0)
    STRATA_SKIP_OR_FAIL("no script(1) (Debian package: bsdutils)");
  TempDir tmp;
  const fs::path trace = tmp.path() / "bar.trace";
  writeTrace(trace, 2000);
  // script(1) runs the command on a pseudo-terminal and copies what it shows to stdout.
  const std::string command = std::string(STRATA_CLI_PATH) + " compare " + trace.string() +
                              " --allocators glibc,glibc --runs 2 --no-plots --out " +
                              (tmp.path() / "out").string() + " >/dev/null";
  const Result r = runProgram("/bin/sh", {"-c", "script -q -e -c '" + command + "' /dev/null"}, {});
  ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "\r\033[K[....................] 1/2 bar: glibc run 1/2")) << r.out;
  EXPECT_TRUE(contains(r.out, "\r\033[K[##########..........] 2/2 bar: glibc run 2/2")) << r.out;
  EXPECT_FALSE(contains(r.out, "replaying on")) << "the per-trace log line is for logs only";
}

// ---- compare end to end on every allocator (preloads: not under sanitizers) -----------------

#if STRATA_TEST_PRELOAD
const std::vector<std::string> kAllocators = {"glibc",      "jemalloc",   "mimalloc",       "strata",
                                              "strata-lea", "strata-kingsley", "strata-secure"};

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

TEST(CompareEndToEnd, BundledWorkloadsOnEveryAllocator) {
  TempDir tmp;
  const fs::path out = tmp.path() / "out";
  const Result r = run({"--size", "0.05", "--runs", "1", "--allocators", joined(kAllocators),
                        "--out", out});
  ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
  std::vector<std::string> names;
  for (const auto& w : strata::tracetools::bundledWorkloads()) {
    names.emplace_back(w.name);
    EXPECT_TRUE(contains(r.out, "== " + std::string(w.name) + ": " + std::string(w.description)))
        << r.out;
    EXPECT_TRUE(fs::exists(out / "traces" / (std::string(w.name) + ".trace")));
  }
  ASSERT_EQ(names.size(), 3u);
  checkOutput(r, out, names, kAllocators, 1, true);
  // The opening line says what runs; the closing lines say where the plots and tables are.
  EXPECT_TRUE(contains(r.out, "7 allocators (7 available) on 3 bundled workloads")) << r.out;
  EXPECT_TRUE(contains(r.out, "plots (.png and .svg) in " + out.string())) << r.out;
  EXPECT_TRUE(contains(r.out, "web-proxy-heap, web-proxy-sizes")) << r.out;
  EXPECT_TRUE(contains(r.out, (out / "report.txt").string())) << r.out;
  // Separate programs, not the processes of one command: no combined verdict.
  EXPECT_FALSE(contains(r.out, "the command as a whole")) << r.out;
  EXPECT_FALSE(contains(slurp(out / "results.json"), "\"command\"")) << "results.json";
}

TEST(CompareEndToEnd, GivenTraceOnTwoAllocatorsThreeRuns) {
  TempDir tmp;
  const fs::path trace = tmp.path() / "mine.trace";
  writeTrace(trace, 5000);
  const fs::path out = tmp.path() / "out";
  const Result r = run({trace.string(), "--allocators", "glibc,strata", "--out", out});
  ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
  checkOutput(r, out, {"mine"}, {"glibc", "strata"}, 3, true);
}

TEST(CompareEndToEnd, RecordsACommandThenCompares) {
  TempDir tmp;
  const fs::path out = tmp.path() / "out";
  const Result r = run({"--allocators", "glibc,jemalloc,strata", "--runs", "1", "--no-plots",
                        "--out", out, "--", STRATA_TEST_PROGRAM});
  ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
  const std::string name = fs::path(STRATA_TEST_PROGRAM).filename().string();
  EXPECT_TRUE(fs::exists(out / (name + ".trace")));
  EXPECT_TRUE(contains(r.out, "checksum")) << "the program ran with its output";
  checkOutput(r, out, {name}, {"glibc", "jemalloc", "strata"}, 1, false);
  // The program makes 20000 allocations (plus reallocs), 512 live at a time.
  const Json j = parseJsonFile(out / "results.json");
  EXPECT_GE(j["traces"].array[0]["stats"]["total_objects"].number, 20000);
}

TEST(CompareEndToEnd, UnavailableAllocatorIsARowNotAFailure) {
  TempDir tmp;
  const fs::path trace = tmp.path() / "t.trace";
  writeTrace(trace, 1000);
  const fs::path out = tmp.path() / "out";
  // Strata's libraries looked for in an empty directory: not built, so unavailable.
  const Result r = run({trace.string(), "--allocators", "glibc,strata", "--runs", "1",
                        "--no-plots", "--out", out},
                       {{"STRATA_LIB_DIR", tmp.path().string()}});
  ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
  EXPECT_EQ(tableRows(r.out, "t"),
            (std::map<std::string, std::string>{{"glibc", "ok"}, {"strata", "unavailable"}}));
  EXPECT_TRUE(contains(r.out, "strata unavailable: ")) << r.out;
  EXPECT_TRUE(contains(r.out, "strata_malloc")) << "names the CMake target to build: " << r.out;
  const Json j = parseJsonFile(out / "results.json");
  EXPECT_EQ(j["traces"].array[0]["results"].array[1]["status"].string, "unavailable");
}
#endif

}  // namespace
