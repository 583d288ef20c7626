// `strata tune` from its options to its report (tune_run.hpp).
#include "tune/tune_run.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>

#include "compare/compare_run.hpp"
#include "support/error.hpp"
#include "support/files.hpp"
#include "support/helpers.hpp"
#include "support/process.hpp"
#include "support/python.hpp"
#include "tracetools/trace_inputs.hpp"
#include "tune/tune_check.hpp"
#include "tune/tune_live.hpp"

namespace strata::tune {
namespace {

namespace fs = std::filesystem;

// The space's allocator resolved, probed and its space checked against it; nullopt (with the
// reason in `skipped`) when it is not installed or does not preload.
std::optional<Target> targetFor(const Space& space, const TuneOptions& o,
                                const registry::SearchDirs& dirs, std::vector<std::string>& skipped) {
  registry::AllocatorSpec spec;
  try {
    spec = registry::parseSpec(space.allocator);
  } catch (const support::Error& e) {
    throw support::Error(o.spaces + ":" + std::to_string(space.line) + ": " + e.what(), 2);
  }
  Target t{&space, registry::resolve(spec, dirs), {}};
  if (!t.where.available) {
    skipped.push_back(space.allocator + ": " + t.where.detail);
    return std::nullopt;
  }
  const registry::ProbeResult p = registry::probe(t.where);
  if (!p.ok) {
    skipped.push_back(space.allocator + ": " + p.reason);
    return std::nullopt;
  }
  t.version = p.version;
  if (const std::string err = checkSpace(space, t.where, t.version, o.spaces); !err.empty())
    throw support::Error(err, 2);
  return t;
}

// The traces: the files given, or the command recorded (tracetools/trace_inputs.hpp), and
// the settings of the search over them.
void gatherTraces(const TuneOptions& o, TuneReport& report, const support::Notes& notes) {
  tracetools::InputRequest request;
  request.traces = o.traces;
  request.command = o.command;
  request.outDir = o.outDir;
  request.who = "strata tune";
  const tracetools::Inputs inputs = tracetools::gatherInputs(request, notes);
  report.intro = inputs.intro;
  SearchSettings& settings = report.settings;
  for (const tracetools::InputTrace& t : inputs.traces) settings.traces.push_back(t.path);
  settings.repeat = o.repeat;
  settings.budgetReplays = o.budgetReplays;
  settings.budgetSeconds = o.budgetSeconds;
  settings.seed = o.seed;
  settings.goal = o.goal;
  settings.threads = o.threads;
  report.appLine = o.command.empty() ? "./app" : support::shellLine(o.command);
}

// The budget shared out: each search gets an equal part of what is left when it starts. The
// searched allocators share it; each composition costs one setting's replays (in a budget of
// seconds, they share it as the others do).
class Budget {
 public:
  Budget(const TuneOptions& o, const Tuning& t)
      : seconds_(o.budgetSeconds > 0),
        parts_(t.targets.size() + (seconds_ ? t.built.size() : 0)),
        started_(std::chrono::steady_clock::now()) {
    const double compositionCost =
        seconds_ ? 0
                 : static_cast<double>(t.built.size() * o.repeat * t.report.settings.traces.size());
    total_ = seconds_ ? o.budgetSeconds
                      : std::max(0.0, static_cast<double>(o.budgetReplays) - compositionCost);
  }
  // What the next search may use: replays, or seconds.
  double share() const {
    const double used =
        seconds_ ? std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count()
                 : spent_;
    return parts_ > index_ ? std::max(0.0, (total_ - used) / static_cast<double>(parts_ - index_))
                           : 0.0;
  }
  // Counts replays that are not a search of their own (glibc's reference).
  void spend(double replays) { spent_ += seconds_ ? 0 : replays; }
  // Ends one search that ran `replays` replays.
  void searched(std::uint64_t replays) {
    spent_ += static_cast<double>(replays);
    ++index_;
  }

 private:
  bool seconds_;
  std::size_t parts_;
  std::chrono::steady_clock::time_point started_;
  double total_ = 0, spent_ = 0;
  std::size_t index_ = 0;
};

// One allocator's space searched, and its best confirmed against its default.
AllocatorRun searchTarget(const Target& t, const SearchSettings& settings, double share,
                          support::Progress& progress) {
  const auto step = [&](const std::string& what) { progress.step(what); };
  AllocatorRun run;
  run.name = t.where.spec.label;
  run.version = t.version;
  run.library = t.where.preload;
  run.space = t.space;
  progress.note("strata tune: searching " + run.name + "'s settings");
  searchAllocator(run, t.where, settings, share, step);
  confirmBest(run, settings, step);
  return run;
}

// A built composition measured as an allocator with one setting.
AllocatorRun measureComposition(const BuiltComposition& b, const SearchSettings& settings,
                                double share, support::Progress& progress) {
  AllocatorRun run;
  run.name = b.name;
  run.library = b.library;
  run.composition = true;
  run.version = "strata build";
  Candidate c;
  c.description = b.type;
  c.spec = b.name + "=" + b.library;
  run.candidates.push_back(c);
  progress.note("strata tune: measuring the composition " + run.name);
  searchAllocator(run, registry::ResolvedAllocator{}, settings, share,
                  [&](const std::string& what) { progress.step(what); });
  return run;
}

}  // namespace

void checkRequest(const Spaces& spaces, const TuneOptions& o) {
  for (const std::string& name : o.allocators) {
    const bool listed = std::any_of(spaces.allocators.begin(), spaces.allocators.end(),
                                    [&](const Space& s) { return s.allocator == name; });
    if (listed) continue;
    std::string names;
    for (const Space& s : spaces.allocators) names += (names.empty() ? "" : ", ") + s.allocator;
    throw support::Error("no search space for allocator '" + name + "' in " + o.spaces +
                         " (it has: " + names + ")", 2);
  }
  tracetools::checkInputs(o.command, o.traces);
}

Tuning prepareTuning(const Spaces& spaces, const TuneOptions& o, const support::Notes& notes) {
  Tuning t;
  t.report.spacesPath = o.spaces;
  t.report.budgetText = o.budgetText;
  const registry::SearchDirs dirs = registry::defaultSearchDirs();
  for (const Space& space : spaces.allocators) {
    if (!o.allocators.empty() &&
        std::find(o.allocators.begin(), o.allocators.end(), space.allocator) == o.allocators.end())
      continue;
    if (std::optional<Target> target = targetFor(space, o, dirs, t.report.skipped))
      t.targets.push_back(std::move(*target));
  }
  std::error_code ec;
  fs::create_directories(o.outDir, ec);
  if (ec) throw support::Error("cannot create the output directory " + o.outDir + ": " + ec.message());
  gatherTraces(o, t.report, notes);
  // Built before the search, so a failed build is known early.
  if (o.compositions)
    t.built = buildCompositions(spaces, fs::path(o.outDir) / "compositions", t.report.skipped,
                                notes);
  return t;
}

void searchAll(const TuneOptions& o, Tuning& t, support::Progress& progress) {
  TuneReport& report = t.report;
  const SearchSettings& settings = report.settings;
  Budget budget(o, t);
  const bool glibcSearched = std::any_of(t.targets.begin(), t.targets.end(),
                                         [](const Target& x) { return x.space->allocator == "glibc"; });
  if (!glibcSearched) {
    progress.note("strata tune: measuring glibc's default as the reference");
    report.glibc = measureSpec("glibc", settings, settings.repeat,
                               [&](const std::string& what) { progress.step(what); });
    budget.spend(static_cast<double>(settings.repeat * settings.traces.size()));
  }
  for (const Target& target : t.targets) {
    AllocatorRun run = searchTarget(target, settings, budget.share(), progress);
    budget.searched(run.replays);
    if (run.name == "glibc" && !run.candidates.empty()) report.glibc = run.candidates.front().measure;
    report.runs.push_back(std::move(run));
  }
  for (const BuiltComposition& b : t.built) {
    AllocatorRun run = measureComposition(b, settings, budget.share(), progress);
    budget.searched(run.replays);
    report.runs.push_back(std::move(run));
  }
}

void checkAllLive(const TuneOptions& o, Tuning& t, support::Progress& progress) {
  for (const AllocatorRun& run : t.report.runs) {
    if (run.composition || run.verdict.candidate < 0 || !run.verdict.significant) continue;
    const Target* target = nullptr;
    for (const Target& x : t.targets)
      if (x.space->allocator == run.name) target = &x;
    if (target == nullptr) continue;
    const Candidate& best = run.candidates[static_cast<std::size_t>(run.verdict.candidate)];
    t.report.live.push_back(checkLive(run.name, o.command, target->where, best, o.repeat,
                                      [&](const std::string& line) { progress.note(line); }));
  }
}

void writeTuneFiles(const TuneOptions& o, const std::string& text, const TuneReport& report) {
  const fs::path out = o.outDir;
  support::writeFileAtomically((out / "report.txt").string(), text);
  support::writeFileAtomically((out / "tune.json").string(), tuneJson(report));
  support::writeFileAtomically((out / "candidates.csv").string(), candidatesCsv(report));
}

support::PlotRun drawTunePlot(const TuneOptions& o) {
  return support::runPlotScript(support::HelperId::TunePlot, {o.outDir});
}

}  // namespace strata::tune
