// Gathering the traces to run on (trace_inputs.hpp).
#include "tracetools/trace_inputs.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include "record/record_session.hpp"
#include "support/error.hpp"
#include "support/files.hpp"
#include "support/format.hpp"
#include "support/process.hpp"
#include "tracetools/site_report.hpp"
#include "tracetools/sites_document.hpp"
#include "tracetools/trace_files.hpp"
#include "tracetools/workloads.hpp"

namespace strata::tracetools {
namespace {

namespace fs = std::filesystem;
using support::baseName;
using support::fileSafe;

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
void readProgram(InputTrace& t) {
  const TraceProgram p = readTraceProgram(t.path);
  t.program = p.path;
  t.pid = p.pid;
  t.parentPid = p.parentPid;
}

// Records the command into dir/<name>.trace with the recorder (with allocation sites when
// asked), telling `notes` what `strata record` would say; returns the trace path.
std::string recordCommand(const InputRequest& o, const support::Notes& notes) {
  const std::string name = fileSafe(fs::path(o.command[0]).filename().string());
  const std::string trace = (fs::path(o.outDir) / (name + ".trace")).string();
  std::error_code ec;
  fs::remove(trace, ec);
  for (const std::string& old : childTraces(trace)) fs::remove(old, ec);
  notes(o.who + ": recording " + support::shellLine(o.command) + " into " + trace);
  record::RecordRequest request;
  request.command = o.command;
  request.file = trace;
  request.settings.sites = o.sites;  // the sites table needs them
  // The recorded run is the user's own: it keeps the terminal. With programStdoutToFile (a
  // JSON document on stdout) the program's output goes to a file.
  if (o.programStdoutToFile)
    request.stdoutPath = (fs::path(o.outDir) / (name + ".record.stdout")).string();
  const record::RecordResult r = record::recordCommand(request);
  for (const std::string& line : record::runLines(r, o.command[0])) notes("strata record: " + line);
  for (const std::string& line : record::summaryLines(r)) notes("strata record: " + line);
  if (!r.fileWritten())
    throw support::Error("recording '" + o.command[0] + "' left no trace (strata record: " +
                         support::describeStatus(r.process) + ")");
  if (!r.process.succeeded())
    notes(o.who + ": '" + o.command[0] + "' ended with " + support::describeStatus(r.process) +
          "; going on with the trace recorded up to then");
  return trace;
}

// What a process is called in messages: its program's name, or its trace's file name when
// the trace does not name it.
std::string processName(const InputTrace& t) {
  return t.program.empty() ? fs::path(t.path).filename().string() : baseName(t.program);
}

// "python3 (pid 1234): 12.0 KiB allocated" for the list of processes left out.
std::string processLine(const InputTrace& t, const std::string& why) {
  return processName(t) + " (pid " + std::to_string(t.pid) + "): " + why;
}

// With --sites, each trace's figures by site, kept by path until the traces are named and
// their sites documents written.
using SitesByPath = std::map<std::string, SiteStats>;

// The trace's statistics, and with --sites the table of its top sites live at its peak and
// its figures by site (into `sites`).
void readStats(const InputRequest& o, InputTrace& t, SitesByPath& sites) {
  SiteStats s;
  t.stats = computeStats(t.path, o.sites ? &s : nullptr);
  if (!o.sites) return;
  static constexpr SiteOrder kPeak[] = {SiteOrder::PeakLive};
  t.sitesTable = formatSiteReport(s, 10, kPeak);
  if (s.present) sites[t.path] = std::move(s);
}

// With --sites, a trace that carries sites gets <name>-sites.json (strata-sites-1).
void writeSites(const fs::path& out, InputTrace& t, const SitesByPath& sites) {
  const auto it = sites.find(t.path);
  if (it == sites.end()) return;
  t.sitesFile = t.name + "-sites.json";
  writeSitesDocument(out / t.sitesFile, t.path, t.stats, it->second);
}

// The processes of a recorded command or trace group: each trace's program read, the ones to
// judge picked and ordered largest first; the others named in `inputs.skippedProcesses`.
// `firstProgram`: the program of the first process when its trace does not name it (an older
// trace of a recorded command: the command's own program).
std::vector<InputTrace> pickProcesses(const InputRequest& o, const std::string& mainTrace,
                                       const std::string& description,
                                       const std::string& firstProgram, Inputs& inputs,
                                       SitesByPath& sites) {
  std::vector<InputTrace> all;
  std::vector<std::string> files = {mainTrace};
  for (const std::string& c : trace::childTraces(mainTrace)) files.push_back(c);
  for (const std::string& f : files) {
    InputTrace t;
    t.path = f;
    readProgram(t);
    if (t.program.empty() && f == mainTrace) t.program = firstProgram;
    readStats(o, t, sites);
    all.push_back(std::move(t));
  }
  std::stable_sort(all.begin(), all.end(), [](const InputTrace& a, const InputTrace& b) {
    return a.stats.totalBytes > b.stats.totalBytes;
  });
  const bool single = all.size() == 1;
  std::vector<InputTrace> picked;
  const std::vector<std::string> wanted = acceptedNames(o.processes);
  for (std::size_t i = 0; i < all.size(); ++i) {
    InputTrace& t = all[i];
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
             (i == 0 && std::none_of(all.begin(), all.end(), [](const InputTrace& x) {
                return x.stats.totalBytes >= kTrivialBytes;
              }));
      why = support::threeDigits(static_cast<double>(t.stats.totalBytes) / support::kMiB) +
            " MiB allocated, under the 1 MiB judged";
    }
    if (!take) {
      inputs.skippedProcesses.push_back(processLine(t, why));
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
    for (const InputTrace& t : all) names += (names.empty() ? "" : ", ") + processName(t);
    throw support::Error("no process matches --process (the processes: " + names + ")");
  }
  return picked;
}

// Each trace's <name>-stats.json, and with --sites its <name>-sites.json. A trace without
// objects cannot be compared; said before any replay starts.
void writeTraceFiles(const fs::path& out, std::vector<InputTrace>& traces,
                     const SitesByPath& sites) {
  for (InputTrace& t : traces) {
    if (t.stats.totalObjects == 0)
      throw support::Error(t.path + ": no object is allocated in this trace (the program "
                               "made no malloc or new calls the recorder saw): nothing to compare");
    t.statsFile = t.name + "-stats.json";
    support::writeFileAtomically((out / t.statsFile).string(), toJson(t.stats));
    writeSites(out, t, sites);
  }
}

}  // namespace

void checkInputs(const std::vector<std::string>& command, const std::vector<std::string>& traces) {
  if (!command.empty()) {
    std::string why;
    if (support::resolveCommand(command[0], why).empty())
      throw support::Error(command[0] + ": " + why, 2);
  }
  for (const std::string& t : traces)
    if (const std::string why = support::unreadable(t); !why.empty())
      throw support::Error("cannot read trace '" + t + "': " + why);
}

Inputs gatherInputs(const InputRequest& o, const support::Notes& notes) {
  Inputs inputs;
  std::vector<InputTrace>& traces = inputs.traces;
  std::string& intro = inputs.intro;
  const fs::path out = o.outDir;
  SitesByPath sites;
  if (!o.command.empty()) {
    inputs.source = "command";
    inputs.commandLine = support::shellLine(o.command);
    if (o.liveOnly) {
      intro = "live runs of " + inputs.commandLine;
      return inputs;
    }
    const std::string trace = recordCommand(o, notes);
    std::string why;
    traces = pickProcesses(o, trace, "recorded from: " + inputs.commandLine,
                           support::resolveCommand(o.command[0], why), inputs, sites);
    intro = "the trace of " + inputs.commandLine;
    if (traces.size() > 1) intro += " (" + std::to_string(traces.size()) + " processes)";
  } else if (o.traces.size() == 1 && !trace::childTraces(o.traces[0]).empty()) {
    inputs.source = "traces";
    traces = pickProcesses(o, o.traces[0], "", "", inputs, sites);
    intro = o.traces[0] + " and the traces of its child processes (" +
            std::to_string(traces.size()) + " compared)";
  } else if (!o.traces.empty()) {
    inputs.source = "traces";
    for (const std::string& t : o.traces) {
      std::string name = fileSafe(fs::path(t).stem().string());
      // Two traces with the same file name get distinct output names.
      for (int k = 2; std::any_of(traces.begin(), traces.end(),
                                  [&](const InputTrace& r) { return r.name == name; }); ++k)
        name = fileSafe(fs::path(t).stem().string()) + "-" + std::to_string(k);
      InputTrace r;
      r.name = name;
      r.path = t;
      readStats(o, r, sites);
      traces.push_back(std::move(r));
    }
    intro = std::to_string(traces.size()) + (traces.size() == 1 ? " trace" : " traces");
  } else {
    inputs.source = "workloads";
    std::error_code ec;
    fs::create_directories(out / "traces", ec);
    if (ec) throw support::Error("cannot create " + (out / "traces").string() + ": " + ec.message());
    const auto workloads = bundledWorkloads();
    const std::string sizeText = support::format("%g", o.size);
    notes(o.who + ": generating " + std::to_string(workloads.size()) + " bundled workloads (size " +
          sizeText + ", seed " + std::to_string(o.seed) + ") into " + (out / "traces").string());
    for (const WorkloadInfo& w : workloads) {
      const std::string path = (out / "traces" / (std::string(w.name) + ".trace")).string();
      generateWorkload(w.name, o.seed, o.size, path);
      InputTrace r;
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
  return inputs;
}

}  // namespace strata::tracetools
