// The traces `strata compare` replays (compare_steps.hpp): the bundled workloads, trace files,
// or a command recorded with `strata record`. A recorded command (or a trace file with
// <file>.<pid> traces of other processes beside it) gives one trace per process; the ones
// that allocated too little to judge are left out unless asked for.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>

#include "compare/compare_steps.hpp"
#include "support/error.hpp"
#include "support/proc.hpp"
#include "support/process.hpp"
#include "tracetools/site_report.hpp"
#include "tracetools/sites_document.hpp"
#include "tracetools/trace_files.hpp"
#include "tracetools/workloads.hpp"

namespace strata::compare {
namespace {

// The last component of a path ("/usr/bin/python3" -> "python3").
std::string baseName(const std::string& path) { return fs::path(path).filename().string(); }

// The program names --process accepts: each name as given, and the file a command of that
// name runs once links are resolved (a trace names its program by /proc/self/exe, so `sh`
// is recorded as `dash` where /bin/sh links to it).
std::vector<std::string> acceptedNames(const std::vector<std::string>& names) {
  std::vector<std::string> out = names;
  for (const std::string& n : names) {
    std::string why;
    const std::string path = support::resolveCommand(n, why);
    std::error_code ec;
    if (path.empty()) continue;
    const fs::path real = fs::canonical(path, ec);
    if (!ec) out.push_back(real.filename().string());
  }
  return out;
}

// Fills the trace's program, pid and parent pid from its program chunk.
void readProgram(TraceReport& t) {
  const tracetools::TraceProgram p = tracetools::readTraceProgram(t.path);
  t.program = p.path;
  t.pid = p.pid;
  t.parentPid = p.parentPid;
}

// Records the command into dir/<name>.trace with `strata record` (with allocation sites for
// --sites); returns the trace path.
std::string recordCommand(const Options& o) {
  const std::string name = fileSafe(fs::path(o.command[0]).filename().string());
  const std::string trace = (fs::path(o.outDir) / (name + ".trace")).string();
  std::error_code ec;
  fs::remove(trace, ec);
  for (const std::string& old : trace::childTraces(trace)) fs::remove(old, ec);
  std::fprintf(stderr, "%s: recording %s into %s\n", o.who.c_str(),
               support::shellLine(o.command).c_str(), trace.c_str());
  support::ChildSpec spec;
  spec.argv = {support::selfExe(), "record", "-o", trace};
  if (o.sites) spec.argv.push_back("--sites");  // the table --sites shows needs them
  spec.argv.push_back("--");
  spec.argv.insert(spec.argv.end(), o.command.begin(), o.command.end());
  spec.stdinPath.clear();  // the recorded run is the user's own: it keeps the terminal
  // With --json, stdout is the JSON document alone: the program's output goes to a file.
  if (o.json) spec.stdoutPath = (fs::path(o.outDir) / (name + ".record.stdout")).string();
  const support::ProcessResult r = runChild(spec);
  struct stat st {};
  if (::stat(trace.c_str(), &st) != 0 || st.st_size == 0)
    throw support::Error("recording '" + o.command[0] + "' left no trace (strata record: " +
                             support::describeStatus(r) + ")");
  if (!r.succeeded())
    std::fprintf(stderr, "%s: '%s' ended with %s; going on with the trace recorded up to then\n",
                 o.who.c_str(), o.command[0].c_str(), support::describeStatus(r).c_str());
  return trace;
}

// "python3 (pid 1234): 12.0 KiB allocated" for the list of processes left out.
std::string processLine(const TraceReport& t, const std::string& why) {
  return (t.program.empty() ? fs::path(t.path).filename().string() : baseName(t.program)) +
         " (pid " + std::to_string(t.pid) + "): " + why;
}

// With --sites, each trace's figures by site, kept by path until the traces are named and
// their sites documents written.
using SitesByPath = std::map<std::string, tracetools::SiteStats>;

// The trace's statistics, and with --sites the table of its top sites live at its peak and
// its figures by site (into `sites`).
void readStats(const Options& o, TraceReport& t, SitesByPath& sites) {
  tracetools::SiteStats s;
  t.stats = tracetools::computeStats(t.path, o.sites ? &s : nullptr);
  if (!o.sites) return;
  static constexpr tracetools::SiteOrder kPeak[] = {tracetools::SiteOrder::PeakLive};
  t.sitesTable = tracetools::formatSiteReport(s, 10, kPeak);
  if (s.present) sites[t.path] = std::move(s);
}

// With --sites, a trace that carries sites gets <name>-sites.json (strata-sites-1).
void writeSites(const fs::path& out, TraceReport& t, const SitesByPath& sites) {
  const auto it = sites.find(t.path);
  if (it == sites.end()) return;
  t.sitesFile = t.name + "-sites.json";
  tracetools::writeSitesDocument(out / t.sitesFile, t.path, t.stats, it->second);
}

// The processes of a recorded command or trace group: each trace's program read, the ones to
// judge picked and ordered largest first; the others named in `command.skippedProcesses`.
// `firstProgram`: the program of the first process when its trace does not name it (an older
// trace of a recorded command: the command's own program).
std::vector<TraceReport> pickProcesses(const Options& o, const std::string& mainTrace,
                                       const std::string& description,
                                       const std::string& firstProgram, CommandReport& command,
                                       SitesByPath& sites) {
  std::vector<TraceReport> all;
  std::vector<std::string> files = {mainTrace};
  for (const std::string& c : trace::childTraces(mainTrace)) files.push_back(c);
  for (const std::string& f : files) {
    TraceReport t;
    t.path = f;
    readProgram(t);
    if (t.program.empty() && f == mainTrace) t.program = firstProgram;
    readStats(o, t, sites);
    all.push_back(std::move(t));
  }
  std::stable_sort(all.begin(), all.end(), [](const TraceReport& a, const TraceReport& b) {
    return a.stats.totalBytes > b.stats.totalBytes;
  });
  const bool single = all.size() == 1;
  std::vector<TraceReport> picked;
  const std::vector<std::string> wanted = acceptedNames(o.processes);
  for (std::size_t i = 0; i < all.size(); ++i) {
    TraceReport& t = all[i];
    const std::string program = t.program.empty() ? std::string() : baseName(t.program);
    bool take;
    std::string why;
    if (!o.processes.empty()) {
      take = std::find(wanted.begin(), wanted.end(), program) != wanted.end();
      why = "not named by --process";
    } else if (t.stats.totalObjects == 0) {
      take = single;  // a lone trace without objects is reported as such below
      why = "no allocations";
    } else {
      take = o.allProcesses || t.stats.totalBytes >= kTrivialBytes || (i == 0 && single) ||
             (i == 0 && std::none_of(all.begin(), all.end(), [](const TraceReport& x) {
                return x.stats.totalBytes >= kTrivialBytes;
              }));
      why = mib(t.stats.totalBytes) + " MiB allocated, under the 1 MiB judged";
    }
    if (!take) {
      command.skippedProcesses.push_back(processLine(t, why));
      continue;
    }
    if (single) {
      t.name = fileSafe(fs::path(t.path).stem().string());
    } else {
      // Named by program and pid ("process-<pid>" when the trace does not name its program);
      // the first process of an older trace (no program chunk, no pid suffix) by the trace's
      // name.
      const std::string stem = fs::path(mainTrace).stem().string();
      t.name = fileSafe(t.pid == 0 ? stem : (program.empty() ? "process" : program) + "-" +
                                                std::to_string(t.pid));
    }
    t.description = description;
    picked.push_back(std::move(t));
  }
  if (picked.empty()) {
    std::string names;
    for (const TraceReport& t : all)
      names += (names.empty() ? "" : ", ") +
               (t.program.empty() ? fs::path(t.path).filename().string() : baseName(t.program));
    throw support::Error("no process matches --process (the processes: " + names + ")");
  }
  return picked;
}

// Each trace's <name>-stats.json, and with --sites its <name>-sites.json. A trace without
// objects cannot be compared; said before any replay starts.
void writeTraceFiles(const fs::path& out, std::vector<TraceReport>& traces,
                     const SitesByPath& sites) {
  for (TraceReport& t : traces) {
    if (t.stats.totalObjects == 0)
      throw support::Error(t.path + ": no object is allocated in this trace (the program "
                               "made no malloc or new calls the recorder saw): nothing to compare");
    t.statsFile = t.name + "-stats.json";
    writeFile(out / t.statsFile, tracetools::toJson(t.stats));
    writeSites(out, t, sites);
  }
}

}  // namespace

std::string fileSafe(std::string_view s) {
  std::string out;
  for (const char c : s) {
    const bool keep =
        std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
    out += keep ? c : '_';
  }
  return out.empty() ? std::string("trace") : out;
}

void writeFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw support::Error("cannot write " + path.string() + ": " + std::strerror(errno));
}

std::string unreadable(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  if (::access(path.c_str(), R_OK) != 0) return std::strerror(errno);
  return {};
}

void gatherTraces(const Options& o, CompareSettings& settings, std::vector<TraceReport>& traces,
                  std::string& intro, CommandReport& command) {
  const fs::path out = o.outDir;
  SitesByPath sites;
  if (!o.command.empty()) {
    settings.source = "command";
    command.commandLine = support::shellLine(o.command);
    if (o.liveOnly) {
      intro = "live runs of " + command.commandLine;
      return;
    }
    const std::string trace = recordCommand(o);
    std::string why;
    traces = pickProcesses(o, trace, "recorded from: " + command.commandLine,
                           support::resolveCommand(o.command[0], why), command, sites);
    intro = "the trace of " + command.commandLine;
    if (traces.size() > 1) intro += " (" + std::to_string(traces.size()) + " processes)";
  } else if (o.traces.size() == 1 && !trace::childTraces(o.traces[0]).empty()) {
    settings.source = "traces";
    traces = pickProcesses(o, o.traces[0], "", "", command, sites);
    intro = o.traces[0] + " and the traces of its child processes (" +
            std::to_string(traces.size()) + " compared)";
  } else if (!o.traces.empty()) {
    settings.source = "traces";
    for (const std::string& t : o.traces) {
      std::string name = fileSafe(fs::path(t).stem().string());
      // Two traces with the same file name get distinct output names.
      for (int k = 2; std::any_of(traces.begin(), traces.end(),
                                  [&](const TraceReport& r) { return r.name == name; }); ++k)
        name = fileSafe(fs::path(t).stem().string()) + "-" + std::to_string(k);
      TraceReport r;
      r.name = name;
      r.path = t;
      readStats(o, r, sites);
      traces.push_back(std::move(r));
    }
    intro = std::to_string(traces.size()) + (traces.size() == 1 ? " trace" : " traces");
  } else {
    settings.source = "workloads";
    std::error_code ec;
    fs::create_directories(out / "traces", ec);
    if (ec) throw support::Error("cannot create " + (out / "traces").string() + ": " + ec.message());
    const auto workloads = tracetools::bundledWorkloads();
    char sizeText[32];
    std::snprintf(sizeText, sizeof sizeText, "%g", o.size);
    std::fprintf(stderr, "strata compare: generating %zu bundled workloads (size %s, seed %llu) "
                 "into %s\n", workloads.size(), sizeText, static_cast<unsigned long long>(o.seed),
                 (out / "traces").c_str());
    for (const tracetools::WorkloadInfo& w : workloads) {
      const std::string path = (out / "traces" / (std::string(w.name) + ".trace")).string();
      tracetools::generateWorkload(w.name, o.seed, o.size, path);
      TraceReport r;
      r.name = std::string(w.name);
      r.path = path;
      r.description = std::string(w.description);
      readStats(o, r, sites);
      traces.push_back(std::move(r));
    }
    intro = std::to_string(traces.size()) + " bundled workloads (size " + sizeText + ", seed " +
            std::to_string(o.seed) + ")";
  }
  writeTraceFiles(out, traces, sites);
}

}  // namespace strata::compare
