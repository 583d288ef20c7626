// `strata compare` from its options to its results (compare_run.hpp).
#include "compare/compare_run.hpp"

#include <algorithm>

#include "support/error.hpp"
#include "support/files.hpp"
#include "support/process.hpp"
#include "support/progress.hpp"

namespace strata::compare {
namespace {

// " run" or " runs", after a count.
std::string runsWord(unsigned runs) { return runs == 1 ? " run" : " runs"; }

// Writes report.txt and results.json as they stand.
void writeResults(const fs::path& out, const std::string& report, const CompareSettings& settings,
                  const std::vector<TraceReport>& traces, const CommandReport* command) {
  support::writeFileAtomically((out / "report.txt").string(), report);
  support::writeFileAtomically((out / "results.json").string(), resultsJson(settings, traces, command));
}

CompareSettings settingsFor(const Options& o) {
  CompareSettings s;
  s.outDir = o.outDir;
  s.runs = o.runs;
  s.threads = o.threads;
  s.heapLimit = o.heapLimit;
  s.size = o.size;
  s.seed = o.seed;
  s.live = !o.command.empty() && o.live;
  return s;
}

// The opening lines: what is compared on what, and the processes left out, the largest first
// (a long list is cut short: results.json has all).
std::string openingLines(const Options& o, const Allocators& a, const std::string& intro,
                         const CommandReport& command) {
  std::string text = "strata compare: " + std::to_string(o.allocators.size()) + " allocators (" +
                     std::to_string(a.available) + " available) on " + intro + ", " +
                     std::to_string(o.runs) + runsWord(o.runs) + " each, median shown; results in " +
                     o.outDir + "/\n";
  constexpr std::size_t kListed = 5;
  const std::vector<std::string>& skipped = command.skippedProcesses;
  for (std::size_t i = 0; i < skipped.size() && i < kListed; ++i)
    text += "   not compared: " + skipped[i] + "\n";
  if (skipped.size() > kListed)
    text += "   not compared: " + std::to_string(skipped.size() - kListed) +
            " more smaller processes\n";
  return text;
}

// Every trace replayed in turn, its table shown and the results rewritten after each.
void replayAll(const Options& o, const Allocators& a, Comparison& c, support::Progress& progress,
               const std::function<void(const std::string&)>& show, const std::string& report) {
  const auto step = [&](const std::string& label) { progress.step(label); };
  const auto skip = [&](std::size_t n) { progress.skip(n); };
  for (std::size_t t = 0; t < c.traces.size(); ++t) {
    TraceReport& trace = c.traces[t];
    progress.note("strata compare: " + trace.name + " (" + std::to_string(t + 1) + "/" +
                  std::to_string(c.traces.size()) + "): replaying on " +
                  std::to_string(a.available) + " allocators, " + std::to_string(o.runs) +
                  runsWord(o.runs) + " each");
    replayTrace(o, a.where, trace, step, skip);
    for (const AllocatorRow& r : trace.rows) c.anyFailed = c.anyFailed || r.failed();
    progress.clear();
    show("\n" + formatTable(trace));
    const std::vector<TraceReport> done(c.traces.begin(), c.traces.begin() + static_cast<long>(t + 1));
    writeResults(o.outDir, report, c.settings, done, nullptr);
  }
}

// The command as a whole: the combined verdict and, with live runs, how far they agree.
void judgeCommand(const Options& o, const Allocators& a, Comparison& c, support::Progress& progress,
                  const std::function<void(const std::string&)>& show) {
  combineProcesses(c.traces, c.command);
  if (c.settings.live) {
    progress.note("strata compare: running " + c.command.commandLine + " on " +
                  std::to_string(a.available) + " allocators, " + std::to_string(o.runs) +
                  runsWord(o.runs) + " each");
    runLive(o, a.where, c.command.live, [&](const std::string& label) { progress.step(label); });
    c.command.haveLive = true;
    for (const LiveRow& r : c.command.live.rows)
      c.anyFailed = c.anyFailed || (!r.ok() && r.status != LiveStatus::Unavailable);
    computeAgreement(c.command);
    progress.clear();
  }
  show("\n" + formatCommand(c.command, c.traces));
}

}  // namespace

tracetools::InputRequest inputRequest(const Options& o) {
  tracetools::InputRequest r;
  r.traces = o.traces;
  r.command = o.command;
  r.processes = o.processes;
  r.outDir = o.outDir;
  r.size = o.size;
  r.seed = o.seed;
  r.sites = o.sites;
  r.allProcesses = o.allProcesses;
  r.liveOnly = o.liveOnly;
  r.programStdoutToFile = o.json;  // stdout is the JSON document alone
  r.who = o.who;
  return r;
}

void completeOptions(Options& o, bool allocatorsGiven) {
  if (!o.traces.empty() && !o.command.empty())
    throw support::UsageError("give trace files or '-- COMMAND', not both");
  if (o.liveOnly && !o.live) throw support::UsageError("--live-only and --no-live contradict each other");
  if (o.liveOnly && o.command.empty()) throw support::UsageError("--live-only needs '-- COMMAND' to run");
  if (o.sites && o.liveOnly)
    throw support::UsageError("--sites shows the traces' sites; --live-only records none");
  if (!allocatorsGiven)
    for (const registry::AllocatorInfo& info : registry::knownAllocators())
      o.allocators.emplace_back(info.name);
  std::vector<std::string> unique;
  for (const std::string& name : o.allocators)
    if (std::find(unique.begin(), unique.end(), name) == unique.end()) unique.push_back(name);
  o.allocators = unique;
}

Allocators resolveAllocators(const std::vector<std::string>& specs) {
  Allocators a;
  const registry::SearchDirs dirs = registry::defaultSearchDirs();
  for (const std::string& text : specs) {
    const registry::AllocatorSpec spec = registry::parseSpec(text);
    for (const registry::ResolvedAllocator& other : a.where)
      if (other.spec.label == spec.label)
        throw support::Error("two allocators are labelled '" + spec.label + "' ('" +
                             other.spec.text + "' and '" + spec.text + "'); name one: LABEL=SPEC", 2);
    a.where.push_back(registry::resolve(spec, dirs));
    if (!a.where.back().available) continue;
    if (const registry::ProbeResult p = registry::probe(a.where.back()); !p.ok)
      throw support::Error(p.reason, 2);
    ++a.available;
  }
  return a;
}

Comparison runComparison(const Options& o, const Allocators& a,
                         const std::function<void(const std::string&)>& show,
                         const support::Notes& notes) {
  std::error_code ec;
  fs::create_directories(fs::path(o.outDir) / "series", ec);
  if (ec) throw support::Error("cannot create the output directory " + o.outDir + ": " + ec.message());
  Comparison c;
  c.settings = settingsFor(o);
  tracetools::Inputs inputs = tracetools::gatherInputs(inputRequest(o), notes);
  c.settings.source = inputs.source;
  c.command.commandLine = inputs.commandLine;
  c.command.skippedProcesses = std::move(inputs.skippedProcesses);
  for (tracetools::InputTrace& t : inputs.traces) c.traces.emplace_back(std::move(t));
  const std::string& intro = inputs.intro;
  // The command block (combined verdict, live runs) is shown for a command, and for a trace
  // whose child processes' traces were found beside it. Several trace files named, or the
  // bundled workloads, are separate programs: no block.
  const bool family = o.command.empty() && o.traces.size() == 1;
  c.commandBlock = !o.command.empty() ||
                   (family && (c.traces.size() > 1 || !c.command.skippedProcesses.empty()));

  std::string report = openingLines(o, a, intro, c.command);
  show(report);
  const auto shown = [&](const std::string& block) {
    report += block;
    show(block);
  };
  support::Progress progress((c.traces.size() + (c.settings.live ? 1 : 0)) * a.available * o.runs);
  replayAll(o, a, c, progress, shown, report);
  if (c.commandBlock) judgeCommand(o, a, c, progress, shown);
  writeResults(o.outDir, report, c.settings, c.traces, c.commandOut());
  return c;
}

}  // namespace strata::compare
