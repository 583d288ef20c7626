// `strata compare [TRACE... | -- COMMAND ARGS...] [--allocators LIST] [--out DIR] ...`: replays
// traces on every allocator and shows which one suits them. With a command it records the
// command first (by running this executable's `record`); with nothing it generates the bundled
// workloads. Each trace is replayed --runs times per allocator, the allocators taking turns
// within a round so machine noise hits all alike; the median run is reported in one table per
// trace (stdout and DIR/report.txt), every result in DIR/results.json, and plots.py draws the
// heap curves, histograms and a summary beside them.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "allocator_registry.hpp"
#include "command.hpp"
#include "compare_report.hpp"
#include "progress.hpp"
#include "replay_runner.hpp"
#include "trace_stats.hpp"
#include "workloads.hpp"

namespace strata::cli {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kHelp =
    "usage: strata compare [TRACE... | -- COMMAND [ARGS...]] [OPTIONS]\n"
    "\n"
    "Replays allocation traces on every allocator and prints, per trace, a table of wall time,\n"
    "ratio to the fastest, peak heap, peak live bytes, fragmentation and status; writes plots\n"
    "(heap over the run, size and lifetime histograms, a summary) beside it.\n"
    "\n"
    "  (nothing)             generate the bundled workloads (web-proxy, editor, server) and\n"
    "                        compare on each of them\n"
    "  TRACE...              compare on these trace files (from `strata record`)\n"
    "  -- COMMAND [ARGS...]  record COMMAND with `strata record`, then compare on its trace\n"
    "\n"
    "  --allocators LIST     comma-separated names (default: every one `strata allocators`\n"
    "                        lists); one that is not installed or built shows as unavailable\n"
    "  --out DIR             where results go (default ./strata-compare; files are overwritten)\n"
    "  --runs N              replays per allocator and trace, the median is shown (default 3)\n"
    "  --threads N           replay threads: 0 one per recorded thread (default), 1 total order\n"
    "  --heap-limit SIZE     stop a replay whose heap exceeds SIZE (bytes, or K/M/G suffix)\n"
    "  --size X              size of the bundled workloads, about X million events (default 1)\n"
    "  --seed N              seed of the bundled workloads (default 1)\n"
    "  --no-plots            skip the plots\n"
    "  --json                print results.json to stdout instead of the tables\n"
    "\n"
    "Output in DIR: report.txt (the tables), results.json (every run), <trace>-stats.json,\n"
    "series/<trace>-<allocator>.csv (heap and live bytes over the run), and the plots\n"
    "<trace>-heap, -sizes, -lifetimes and -summary as .png and .svg. Plots need Python with\n"
    "matplotlib (Debian: apt-get install python3-matplotlib); STRATA_PYTHON names the Python.\n"
    "\n"
    "Exit status: 0 when every available allocator finished (ok or heap-limit); 1 when a replay\n"
    "failed or a trace cannot be read; 2 for a wrong invocation or an unknown allocator; 3 when\n"
    "the plots were skipped because no Python with matplotlib was found.\n"
    "\n"
    "examples: strata compare\n"
    "          strata compare --allocators glibc,jemalloc,strata -- python3 -c 'print(42)'\n";

constexpr std::string_view kPlotKinds[] = {"heap", "sizes", "lifetimes", "summary"};

// A wrong invocation: the reason and the usage (command.hpp); exit status 2.
int usageError(const std::string& why) { return cli::usageError("compare", kHelp, why); }

// A failure the user can act on (naming the file); exit status 1.
int failure(const std::string& why) {
  std::fprintf(stderr, "strata compare: %s\n", why.c_str());
  return 1;
}

// Everything the command line said.
struct Options {
  std::vector<std::string> traces;
  std::vector<std::string> command;  // after "--"
  std::vector<std::string> allocators;
  std::string outDir = "strata-compare";
  unsigned runs = 3;
  unsigned threads = 0;
  std::uint64_t heapLimit = 0;
  double size = 1;
  std::uint64_t seed = 1;
  bool plots = true;
  bool json = false;
};

// Parses an unsigned decimal integer; nullopt for anything else.
std::optional<std::uint64_t> parseUnsigned(std::string_view s) {
  if (s.empty() || s.size() > 19) return std::nullopt;
  std::uint64_t v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

// Parses a byte count: digits with an optional K, M, G or T suffix (powers of 1024), which may
// be followed by "iB" or "B" ("512M", "2GiB", "100000").
std::optional<std::uint64_t> parseSize(std::string_view s) {
  std::size_t digits = 0;
  while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') ++digits;
  const std::optional<std::uint64_t> n = parseUnsigned(s.substr(0, digits));
  if (!n) return std::nullopt;
  std::string_view unit = s.substr(digits);
  if (unit.ends_with("iB")) unit.remove_suffix(2);
  else if (unit.ends_with("B")) unit.remove_suffix(1);
  int shift = 0;
  if (unit == "K" || unit == "k") shift = 10;
  else if (unit == "M" || unit == "m") shift = 20;
  else if (unit == "G" || unit == "g") shift = 30;
  else if (unit == "T" || unit == "t") shift = 40;
  else if (!unit.empty()) return std::nullopt;
  if (*n > (UINT64_MAX >> shift)) return std::nullopt;
  return *n << shift;
}

// Splits "a,b,c" into its names; empty names are kept so the caller can reject them.
std::vector<std::string> splitList(std::string_view s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = s.find(',', start);
    out.emplace_back(s.substr(start, comma == std::string_view::npos ? s.npos : comma - start));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

// Parses the arguments into `o`; returns an error message, or empty on success.
std::string parseArgs(std::span<char* const> args, Options& o) {
  bool haveAllocators = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view a = args[i];
    if (a == "--") {
      for (std::size_t k = i + 1; k < args.size(); ++k) o.command.emplace_back(args[k]);
      if (o.command.empty()) return "missing the COMMAND to record after '--'";
      break;
    }
    if (!a.starts_with("-") || a == "-") {
      o.traces.emplace_back(a);
      continue;
    }
    // "--name VALUE" or "--name=VALUE" for the options that take a value.
    std::string_view name = a, value;
    bool inlineValue = false;
    if (const std::size_t eq = a.find('='); eq != std::string_view::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
      inlineValue = true;
    }
    if (name == "--no-plots" || name == "--json") {
      if (inlineValue) return "option '" + std::string(name) + "' takes no value";
      if (name == "--json") o.json = true;
      else o.plots = false;
      continue;
    }
    static constexpr std::string_view kValued[] = {"--allocators", "--out", "--runs", "--threads",
                                                   "--heap-limit", "--size", "--seed"};
    if (std::find(std::begin(kValued), std::end(kValued), name) == std::end(kValued))
      return "unknown option '" + std::string(a) + "'";
    if (!inlineValue) {
      if (i + 1 >= args.size()) return std::string(name) + " needs a value";
      value = args[++i];
    }
    const std::string bad = "invalid value '" + std::string(value) + "' for " + std::string(name);
    if (name == "--allocators") {
      o.allocators = splitList(value);
      haveAllocators = true;
    } else if (name == "--out") {
      if (value.empty()) return bad;
      o.outDir = value;
    } else if (name == "--runs") {
      const auto n = parseUnsigned(value);
      if (!n || *n == 0 || *n > 1000) return bad + " (1 to 1000)";
      o.runs = static_cast<unsigned>(*n);
    } else if (name == "--threads") {
      const auto n = parseUnsigned(value);
      if (!n || *n > 4096) return bad + " (0 to 4096)";
      o.threads = static_cast<unsigned>(*n);
    } else if (name == "--heap-limit") {
      const auto n = parseSize(value);
      if (!n) return bad + " (bytes, or a number with K, M, G or T)";
      o.heapLimit = *n;
    } else if (name == "--size") {
      char* end = nullptr;
      const std::string v(value);
      const double x = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !std::isfinite(x) || x <= 0 || x > 1000)
        return bad + " (more than 0, at most 1000: about that many million events)";
      o.size = x;
    } else if (name == "--seed") {
      const auto n = parseUnsigned(value);
      if (!n) return bad;
      o.seed = *n;
    }
  }
  if (!o.traces.empty() && !o.command.empty())
    return "give trace files or '-- COMMAND', not both";
  if (!haveAllocators)
    for (const AllocatorInfo& info : knownAllocators()) o.allocators.emplace_back(info.name);
  return {};
}

// The running executable, to run its `record` subcommand.
std::string selfExe() {
  char buf[PATH_MAX];
  const ssize_t len = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (len <= 0) return {};
  return std::string(buf, static_cast<std::size_t>(len));
}

// Runs argv[0] (searched in PATH when it has no slash) with the given arguments and waits.
// `quiet` sends its stdout and stderr to /dev/null. Returns the exit status, 128+signal when
// killed, or 127 when it could not be started.
int runProgram(const std::vector<std::string>& argv, bool quiet) {
  std::vector<char*> cargv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return 127;
  if (pid == 0) {
    if (quiet) {
      const int devnull = ::open("/dev/null", O_WRONLY);
      if (devnull >= 0) {
        ::dup2(devnull, STDOUT_FILENO);
        ::dup2(devnull, STDERR_FILENO);
      }
    }
    ::execvp(cargv[0], cargv.data());
    _exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return 127;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 127;
}

// Writes `text` to `path`, replacing it; throws std::runtime_error naming the file.
void writeFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(errno));
}

// A name usable in file names: letters, digits, '.', '_' and '-' kept, the rest made '_'.
std::string fileSafe(std::string_view s) {
  std::string out;
  for (const char c : s) {
    const bool keep =
        std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
    out += keep ? c : '_';
  }
  return out.empty() ? std::string("trace") : out;
}

// Why a trace file cannot be read, or empty when it is a readable regular file.
std::string unreadable(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  if (::access(path.c_str(), R_OK) != 0) return std::strerror(errno);
  return {};
}

// `args` joined by spaces, each one that holds a space or a shell character in single quotes,
// so the line can be pasted back into a shell.
std::string shellLine(const std::vector<std::string>& args) {
  std::string line;
  for (const std::string& a : args) {
    if (!line.empty()) line += ' ';
    if (!a.empty() && a.find_first_of(" \t\n'\"\\$`;&|<>()*?[]{}~#!") == std::string::npos) {
      line += a;
      continue;
    }
    line += '\'';
    for (const char c : a) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

// The traces `strata record` wrote for the command's child processes: <trace>.<pid> files.
std::vector<std::string> childTraces(const std::string& trace) {
  std::vector<std::string> found;
  std::error_code ec;
  const fs::path dir = fs::path(trace).parent_path();
  const std::string prefix = fs::path(trace).filename().string() + ".";
  for (const auto& e : fs::directory_iterator(dir.empty() ? fs::path(".") : dir, ec))
    if (e.path().filename().string().starts_with(prefix)) found.push_back(e.path().string());
  std::sort(found.begin(), found.end());
  return found;
}

// Records `command` into dir/<name>.trace with `strata record`; returns the trace path, or
// empty after printing why there is no trace. A command that exits non-zero still leaves
// the trace of what it did, which is compared (with a note).
std::string recordCommand(const Options& o) {
  const std::string name = fileSafe(fs::path(o.command[0]).filename().string());
  const std::string trace = (fs::path(o.outDir) / (name + ".trace")).string();
  std::vector<std::string> argv = {selfExe(), "record", "-o", trace, "--"};
  argv.insert(argv.end(), o.command.begin(), o.command.end());
  std::error_code ec;
  fs::remove(trace, ec);
  for (const std::string& old : childTraces(trace)) fs::remove(old, ec);
  std::fprintf(stderr, "strata compare: recording %s into %s\n", shellLine(o.command).c_str(),
               trace.c_str());
  const int status = runProgram(argv, false);
  struct stat st {};
  if (::stat(trace.c_str(), &st) != 0 || st.st_size == 0) {
    failure("recording '" + o.command[0] + "' left no trace (strata record exited with status " +
            std::to_string(status) + ")");
    return {};
  }
  if (status != 0)
    std::fprintf(stderr, "strata compare: '%s' exited with status %d; comparing on the trace "
                 "recorded up to then\n", o.command[0].c_str(), status);
  const std::vector<std::string> children = childTraces(trace);
  if (!children.empty()) {
    std::fprintf(stderr, "strata compare: comparing on the first process's trace; traces of "
                 "child processes (`strata compare FILE` compares them):");
    for (const std::string& c : children) std::fprintf(stderr, " %s", c.c_str());
    std::fputc('\n', stderr);
  }
  return trace;
}

// The Python to run plots.py with: $STRATA_PYTHON when set, else /usr/bin/python3 (where
// Debian's python3-matplotlib is), else python3 in PATH; the first that imports matplotlib.
std::optional<std::string> findPython() {
  std::vector<std::string> candidates;
  const char* env = std::getenv("STRATA_PYTHON");
  if (env != nullptr && env[0] != '\0') {
    candidates.emplace_back(env);
  } else {
    candidates = {"/usr/bin/python3", "python3"};
  }
  for (const std::string& c : candidates)
    if (runProgram({c, "-c", "import matplotlib"}, true) == 0) return c;
  return std::nullopt;
}

// plots.py: $STRATA_PLOTS_SCRIPT when set, else <exe dir>/../share/strata/plots.py, where both
// the build tree and an install put it.
std::string plotScript() {
  const char* env = std::getenv("STRATA_PLOTS_SCRIPT");
  if (env != nullptr && env[0] != '\0') return env;
  return (fs::path(selfExe()).parent_path().parent_path() / "share" / "strata" / "plots.py")
      .lexically_normal()
      .string();
}

// Writes a replay's series as CSV when the runner filled it but left no file.
void writeSeries(const fs::path& path, const replay::ReplayResult& r) {
  std::string csv = "seconds,event,heap_bytes,live_bytes\n";
  char line[128];
  for (const replay::ReplaySample& s : r.series) {
    std::snprintf(line, sizeof line, "%.9g,%llu,%llu,%llu\n", s.seconds,
                  static_cast<unsigned long long>(s.event),
                  static_cast<unsigned long long>(s.heapBytes),
                  static_cast<unsigned long long>(s.liveBytes));
    csv += line;
  }
  writeFile(path, csv);
}

// Every run of one allocator on one trace.
struct Runs {
  const Location* where = nullptr;
  std::vector<replay::ReplayResult> results;
  std::vector<std::string> seriesFiles;  // one per result
  bool failed = false;
};

// Turns an allocator's runs into its row: the run with the median wall time (the failed run
// if one failed), whose series file is kept as series/<trace>-<allocator>.csv.
AllocatorRow makeRow(const std::string& allocator, Runs& runs, const fs::path& outDir,
                     const std::string& traceName) {
  AllocatorRow row;
  row.allocator = allocator;
  for (const replay::ReplayResult& r : runs.results) {
    row.wallRuns.push_back(r.wallSeconds);
    row.cpuRuns.push_back(r.cpuSeconds);
  }
  std::size_t pick = runs.results.size() - 1;
  if (!runs.failed) {
    std::vector<std::size_t> order(runs.results.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return runs.results[a].wallSeconds < runs.results[b].wallSeconds;
    });
    pick = order[(order.size() - 1) / 2];
  }
  row.median = runs.results[pick];
  row.median.allocator = allocator;
  const std::string kept = "series/" + traceName + "-" + allocator + ".csv";
  std::error_code ec;
  for (std::size_t i = 0; i < runs.seriesFiles.size(); ++i) {
    const fs::path file = runs.seriesFiles[i];
    if (i == pick && row.finished()) {
      if (!fs::exists(file, ec) && !runs.results[i].series.empty())
        writeSeries(file, runs.results[i]);
      if (fs::exists(file, ec)) {
        fs::rename(file, outDir / kept, ec);
        if (!ec) row.seriesFile = kept;
      }
    } else {
      fs::remove(file, ec);
    }
  }
  return row;
}

// The command: parses, gathers the traces, replays, prints and plots.
int runCompare(std::span<char* const> args) {
  Options o;
  if (const std::string err = parseArgs(args, o); !err.empty()) return usageError(err);
  // A name given twice is compared once.
  std::vector<std::string> unique;
  for (const std::string& name : o.allocators)
    if (std::find(unique.begin(), unique.end(), name) == unique.end()) unique.push_back(name);
  o.allocators = unique;
  for (const std::string& name : o.allocators) {
    if (findAllocator(name) == nullptr) {
      std::fprintf(stderr, "strata compare: unknown allocator '%s'; known allocators: %s\n",
                   name.c_str(), knownAllocatorNames().c_str());
      return 2;
    }
  }
  for (const std::string& t : o.traces)
    if (const std::string why = unreadable(t); !why.empty())
      return failure("cannot read trace '" + t + "': " + why);

  const fs::path out = o.outDir;
  std::error_code ec;
  fs::create_directories(out / "series", ec);
  if (ec) return failure("cannot create the output directory " + o.outDir + ": " + ec.message());

  CompareSettings settings;
  settings.outDir = o.outDir;
  settings.runs = o.runs;
  settings.threads = o.threads;
  settings.heapLimit = o.heapLimit;
  settings.size = o.size;
  settings.seed = o.seed;

  // The traces to compare on, with a line saying what each one is.
  std::vector<TraceReport> traces;
  std::string intro;
  try {
    if (!o.command.empty()) {
      settings.source = "command";
      const std::string trace = recordCommand(o);
      if (trace.empty()) return 1;
      const std::string cmdline = shellLine(o.command);
      traces.push_back(
          {fs::path(trace).stem().string(), trace, "recorded from: " + cmdline, {}, {}, {}});
      intro = "the trace of " + cmdline;
    } else if (!o.traces.empty()) {
      settings.source = "traces";
      for (const std::string& t : o.traces) {
        std::string name = fileSafe(fs::path(t).stem().string());
        // Two traces with the same file name get distinct output names.
        for (int k = 2; std::any_of(traces.begin(), traces.end(),
                                    [&](const TraceReport& r) { return r.name == name; }); ++k)
          name = fileSafe(fs::path(t).stem().string()) + "-" + std::to_string(k);
        traces.push_back({name, t, "", {}, {}, {}});
      }
      intro = std::to_string(traces.size()) + (traces.size() == 1 ? " trace" : " traces");
    } else {
      settings.source = "workloads";
      fs::create_directories(out / "traces", ec);
      if (ec) return failure("cannot create " + (out / "traces").string() + ": " + ec.message());
      const auto workloads = tracetools::bundledWorkloads();
      char sizeText[32];
      std::snprintf(sizeText, sizeof sizeText, "%g", o.size);
      std::fprintf(stderr, "strata compare: generating %zu bundled workloads (size %s, seed %llu) "
                   "into %s\n", workloads.size(), sizeText, static_cast<unsigned long long>(o.seed),
                   (out / "traces").c_str());
      for (const tracetools::WorkloadInfo& w : workloads) {
        const std::string path = (out / "traces" / (std::string(w.name) + ".trace")).string();
        tracetools::generateWorkload(w.name, o.seed, o.size, path);
        traces.push_back({std::string(w.name), path, std::string(w.description), {}, {}, {}});
      }
      intro = std::to_string(traces.size()) + " bundled workloads (size " + sizeText + ", seed " +
              std::to_string(o.seed) + ")";
    }
    // Statistics first: a corrupt trace is reported before any replay starts.
    for (TraceReport& t : traces) {
      t.stats = tracetools::computeStats(t.path);
      if (t.stats.totalObjects == 0)
        throw std::runtime_error(t.path + ": no object is allocated in this trace (the program "
                                 "made no malloc or new calls the recorder saw): nothing to compare");
      t.statsFile = t.name + "-stats.json";
      writeFile(out / t.statsFile, tracetools::toJson(t.stats));
    }
  } catch (const std::exception& e) {
    return failure(e.what());
  }

  const SearchDirs dirs = defaultSearchDirs();
  std::vector<Location> where;
  std::size_t available = 0;
  for (const std::string& name : o.allocators) {
    where.push_back(locate(*findAllocator(name), dirs));
    if (where.back().available) ++available;
  }

  std::string report = "strata compare: " + std::to_string(o.allocators.size()) + " allocators (" +
                       std::to_string(available) + " available) on " + intro + ", " +
                       std::to_string(o.runs) + (o.runs == 1 ? " run" : " runs") +
                       " each, median shown; results in " + o.outDir + "/\n";
  if (!o.json) {
    std::fputs(report.c_str(), stdout);
    std::fflush(stdout);
  }

  Progress progress(traces.size() * available * o.runs);
  bool anyFailed = false;
  for (std::size_t t = 0; t < traces.size(); ++t) {
    TraceReport& trace = traces[t];
    progress.note("strata compare: " + trace.name + " (" + std::to_string(t + 1) + "/" +
                  std::to_string(traces.size()) + "): replaying on " + std::to_string(available) +
                  " allocators, " + std::to_string(o.runs) + (o.runs == 1 ? " run" : " runs") +
                  " each");
    std::vector<Runs> runs(o.allocators.size());
    for (std::size_t a = 0; a < runs.size(); ++a) runs[a].where = &where[a];
    try {
      for (unsigned round = 0; round < o.runs; ++round) {
        for (std::size_t a = 0; a < runs.size(); ++a) {
          Runs& r = runs[a];
          if (!r.where->available || r.failed) continue;
          const std::string& name = o.allocators[a];
          progress.step(trace.name + ": " + name + " run " + std::to_string(round + 1) + "/" +
                        std::to_string(o.runs));
          replay::ReplayOptions ro;
          ro.tracePath = trace.path;
          ro.allocator = name;
          ro.threads = o.threads;
          ro.heapLimit = o.heapLimit;
          ro.seriesPath = (out / "series" / (trace.name + "-" + name + ".run" +
                                             std::to_string(round + 1) + ".csv")).string();
          r.seriesFiles.push_back(ro.seriesPath);
          r.results.push_back(replay::runReplay(ro, dirs));
          const replay::ReplayStatus status = r.results.back().status;
          if (status != replay::ReplayStatus::Ok && status != replay::ReplayStatus::HeapLimit) {
            r.failed = true;
            progress.skip(o.runs - round - 1);
          }
        }
      }
    } catch (const std::exception& e) {
      progress.clear();
      return failure(e.what());
    }

    for (std::size_t a = 0; a < runs.size(); ++a) {
      const std::string& name = o.allocators[a];
      if (!runs[a].where->available) {
        AllocatorRow row;
        row.allocator = name;
        row.median.allocator = name;
        row.median.status = replay::ReplayStatus::Unavailable;
        row.median.detail = howToGet(*runs[a].where);
        trace.rows.push_back(row);
        continue;
      }
      try {
        trace.rows.push_back(makeRow(name, runs[a], out, trace.name));
      } catch (const std::exception& e) {
        progress.clear();
        return failure(e.what());
      }
      if (trace.rows.back().failed()) anyFailed = true;
    }
    computeRatios(trace);

    const std::string block = "\n" + formatTable(trace);
    report += block;
    progress.clear();
    if (!o.json) {
      std::fputs(block.c_str(), stdout);
      std::fflush(stdout);
    }
    try {
      writeFile(out / "report.txt", report);
      std::vector<TraceReport> done(traces.begin(), traces.begin() + static_cast<long>(t + 1));
      writeFile(out / "results.json", resultsJson(settings, done));
    } catch (const std::exception& e) {
      return failure(e.what());
    }
  }
  if (o.json) std::fputs(resultsJson(settings, traces).c_str(), stdout);
  std::fflush(stdout);

  // Where everything is; in --json mode on stderr, so stdout stays one JSON document.
  std::FILE* info = o.json ? stderr : stdout;
  int status = anyFailed ? 1 : 0;
  if (o.plots) {
    const std::optional<std::string> python = findPython();
    const std::string script = plotScript();
    if (!python) {
      std::fprintf(stderr, "strata compare: plots need python3-matplotlib (apt-get install "
                   "python3-matplotlib); the table is in %s\n", (out / "report.txt").c_str());
      if (status == 0) status = 3;
    } else if (!unreadable(script).empty()) {
      std::fprintf(stderr, "strata compare: the plot script %s is missing (%s); the table is in "
                   "%s\n", script.c_str(), unreadable(script).c_str(),
                   (out / "report.txt").c_str());
      status = 1;
    } else {
      std::fprintf(stderr, "strata compare: drawing the plots with %s\n", python->c_str());
      const int rc = runProgram({*python, script, o.outDir}, false);
      if (rc != 0) {
        std::fprintf(stderr, "strata compare: the plot script failed (exit status %d); the table "
                     "is in %s\n", rc, (out / "report.txt").c_str());
        status = 1;
      } else {
        std::fprintf(info, "\nplots (.png and .svg) in %s/:\n", o.outDir.c_str());
        for (const TraceReport& t : traces) {
          std::string names;
          for (const std::string_view kind : kPlotKinds)
            names += (names.empty() ? "" : ", ") + t.name + "-" + std::string(kind);
          std::fprintf(info, "  %s\n", names.c_str());
        }
      }
    }
  }
  std::fprintf(info, "%stables: %s; every result: %s\n", o.plots ? "" : "\n",
               (out / "report.txt").c_str(), (out / "results.json").c_str());
  return status;
}

}  // namespace

const Command kCompareCommand{"compare",
                              "replay traces on every allocator: a table and plots (start here)",
                              kHelp, &runCompare};

}  // namespace strata::cli
