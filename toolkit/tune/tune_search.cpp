// The search of `strata tune` (tune_search.hpp).
#include "tune/tune_search.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

#include "compare/compare_report.hpp"
#include "support/error.hpp"
#include "replay/replay_runner.hpp"

namespace strata::tune {
namespace {

using Clock = std::chrono::steady_clock;

// A gain smaller than this is not claimed even when the runs agree exactly (a peak heap
// replayed on one thread does not vary): it would not be worth a setting.
constexpr double kSmallestGain = 0.01;

}  // namespace

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

namespace {

double spread(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  const double m = median(v);
  return m > 0 ? (*hi - *lo) / m : 0;
}

// splitmix64: the search order depends on the seed alone, on any standard library.
struct Rng {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }
};

std::uint64_t hashName(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

// The budget of one allocator: replays or seconds, counted from its start.
struct Budget {
  const SearchSettings& settings;
  double share;
  Clock::time_point start = Clock::now();
  std::uint64_t used = 0;
  bool allows(std::uint64_t cost) const {
    if (settings.budgetSeconds > 0)
      return std::chrono::duration<double>(Clock::now() - start).count() < share;
    return static_cast<double>(used + cost) <= share;
  }
};

}  // namespace

unsigned confirmationRounds(const SearchSettings& settings) { return std::max(settings.repeat, 5u); }

const char* goalName(Goal g) {
  switch (g) {
    case Goal::Balanced: return "balanced";
    case Goal::Time: return "time";
    case Goal::Memory: return "memory";
  }
  return "";
}

double score(Goal goal, double timeRatio, double heapRatio) {
  switch (goal) {
    case Goal::Time: return timeRatio;
    case Goal::Memory: return heapRatio;
    case Goal::Balanced: return std::sqrt(timeRatio * heapRatio);
  }
  return timeRatio;
}

Measure measureSpec(const std::string& spec, const SearchSettings& settings, unsigned rounds,
                    const std::function<void(const std::string&)>& step) {
  Measure m;
  m.ok = true;
  // Parsed and resolved once for all its replays. A spec that does not parse fails at the first
  // replay, as an allocator that is not there.
  std::string unusable;
  registry::ResolvedAllocator allocator;
  try {
    allocator = registry::resolve(registry::parseSpec(spec, true), registry::defaultSearchDirs());
  } catch (const support::Error& e) {
    unusable = e.what();
  }
  for (unsigned r = 0; r < rounds && m.ok; ++r) {
    double seconds = 0, heap = 0;
    for (const std::string& trace : settings.traces) {
      step(spec);
      if (!unusable.empty()) {
        m.ok = false;
        m.failure = std::string(replay::statusName(replay::ReplayStatus::Unavailable)) + ": " + unusable;
        break;
      }
      replay::ReplayOptions ro;
      ro.tracePath = trace;
      ro.threads = settings.threads;
      const replay::ReplayResult res = replay::runReplay(ro, allocator);
      if (res.status != replay::ReplayStatus::Ok) {
        m.ok = false;
        m.failure = std::string(replay::statusName(res.status)) + ": " + res.detail;
        break;
      }
      seconds += compare::replayTime(res);
      heap += static_cast<double>(res.peakHeapBytes);
    }
    if (!m.ok) break;
    m.seconds.push_back(seconds);
    m.heapBytes.push_back(heap);
  }
  if (m.ok) {
    m.time = median(m.seconds);
    m.heap = median(m.heapBytes);
    m.timeSpread = spread(m.seconds);
    m.heapSpread = spread(m.heapBytes);
  }
  return m;
}

namespace {

// One allocator's search. Its four phases (the default, each option alone, the winners
// combined, random combinations) share the one budget, the set of settings tried and the
// seeded generator, whose order of draws fixes what a seed tries: they are its steps, taken
// in that order by searchAllocator().
class Search {
 public:
  Search(AllocatorRun& run, const SearchSettings& settings, double share,
         const std::function<void(const std::string&)>& step)
      : run_(run),
        settings_(settings),
        step_(step),
        cost_(static_cast<std::uint64_t>(settings.repeat) * settings.traces.size()),
        budget_{settings, std::max(share - confirmationShare(), static_cast<double>(cost_))},
        rng_{settings.seed ^ hashName(run.name)} {}

  // A composition's one candidate, its default, measured.
  void measureOnly() {
    Candidate c = run_.candidates.empty() ? Candidate{} : run_.candidates.front();
    run_.candidates.clear();
    c.isDefault = true;
    evaluate(std::move(c));
  }

  // The default first, always; false when the allocator fails on the trace itself.
  bool tryDefault() {
    none_ = Setting(run_.space->options.size(), -1);
    Candidate def = candidateFor(none_);
    def.isDefault = true;
    tried_.insert(none_);
    evaluate(std::move(def));
    return run_.candidates.front().measure.ok;
  }

  // One option at a time, every value, in an order the seed fixes; false when the budget ran
  // out.
  bool trySingles() {
    std::vector<std::pair<std::size_t, int>> singles;
    for (std::size_t o = 0; o < none_.size(); ++o)
      for (std::size_t v = 0; v < run_.space->options[o].values.size(); ++v)
        singles.emplace_back(o, static_cast<int>(v));
    for (std::size_t i = singles.size(); i > 1; --i) std::swap(singles[i - 1], singles[rng_.below(i)]);
    for (const auto& [o, v] : singles) {
      if (!budget_.allows(cost_)) return false;
      Setting s = none_;
      s[o] = v;
      if (!tried_.insert(s).second) continue;
      evaluate(candidateFor(s));
    }
    return true;
  }

  // The winners combined: each option's best value where it beat the default, the options in
  // order of their gain, added one by one; false when the budget ran out.
  bool tryCombined() {
    const std::vector<std::pair<double, std::pair<std::size_t, int>>> gains = singleGains();
    Setting combined = none_;
    for (std::size_t k = 0; k < gains.size(); ++k) {
      combined[gains[k].second.first] = gains[k].second.second;
      if (k == 0) continue;
      if (!budget_.allows(cost_)) return false;
      if (tried_.insert(combined).second) evaluate(candidateFor(combined));
    }
    return true;
  }

  // Random combinations of two to four options, as long as the budget lasts.
  void tryRandom() {
    const std::size_t n = none_.size();
    if (n < 2) return;
    for (int attempts = 0; attempts < 10000 && budget_.allows(cost_); ++attempts) {
      Setting s = none_;
      const std::size_t k = 2 + rng_.below(std::min<std::size_t>(n, 4) - 1);
      for (std::size_t j = 0; j < k; ++j) {
        const std::size_t o = rng_.below(n);
        s[o] = static_cast<int>(rng_.below(run_.space->options[o].values.size()));
      }
      if (!tried_.insert(s).second) continue;
      evaluate(candidateFor(s));
    }
  }

 private:
  // The confirmation of the best (confirmBest: the default and the best, side by side) comes
  // out of the same share.
  double confirmationShare() const {
    if (run_.space == nullptr || settings_.budgetSeconds > 0) return 0;
    return 2.0 * confirmationRounds(settings_) * static_cast<double>(settings_.traces.size());
  }

  void evaluate(Candidate c) {
    c.measure = measureSpec(c.spec, settings_, settings_.repeat, step_);
    budget_.used += cost_;
    run_.replays += cost_;
    run_.candidates.push_back(std::move(c));
  }

  Candidate candidateFor(const Setting& s) const {
    Candidate c;
    c.setting = s;
    c.description = describe(*run_.space, s);
    c.environment = environmentFor(*run_.space, s);
    c.spec = specFor(*run_.space, s);
    return c;
  }

  // Each option's best value alone where it beat the default, with its score, best first.
  std::vector<std::pair<double, std::pair<std::size_t, int>>> singleGains() const {
    const Measure& d = run_.candidates.front().measure;
    std::vector<std::pair<double, std::pair<std::size_t, int>>> gains;
    for (std::size_t o = 0; o < none_.size(); ++o) {
      double best = 1;
      int bestValue = -1;
      for (const Candidate& c : run_.candidates) {
        if (!c.measure.ok || c.setting.empty() || c.setting[o] < 0) continue;
        if (std::count_if(c.setting.begin(), c.setting.end(), [](int x) { return x >= 0; }) != 1) continue;
        const double sc = score(settings_.goal, c.measure.time / d.time,
                                d.heap > 0 ? c.measure.heap / d.heap : 1);
        if (sc < best) {
          best = sc;
          bestValue = c.setting[o];
        }
      }
      if (bestValue >= 0) gains.push_back({best, {o, bestValue}});
    }
    std::sort(gains.begin(), gains.end());
    return gains;
  }

  AllocatorRun& run_;
  const SearchSettings& settings_;
  const std::function<void(const std::string&)>& step_;
  const std::uint64_t cost_;
  Budget budget_;
  Rng rng_;
  std::set<Setting> tried_;
  Setting none_;
};

}  // namespace

void searchAllocator(AllocatorRun& run, const registry::ResolvedAllocator& base,
                     const SearchSettings& settings, double share,
                     const std::function<void(const std::string&)>& step) {
  (void)base;
  Search search(run, settings, share, step);
  if (run.space == nullptr) {
    search.measureOnly();
    return;
  }
  if (search.tryDefault() && search.trySingles() && search.tryCombined()) search.tryRandom();
}

void confirmBest(AllocatorRun& run, const SearchSettings& settings,
                 const std::function<void(const std::string&)>& step) {
  run.verdict = Verdict{};
  if (run.candidates.empty() || !run.candidates.front().measure.ok || run.space == nullptr) return;
  const Measure& d = run.candidates.front().measure;
  double best = 1;
  for (std::size_t i = 1; i < run.candidates.size(); ++i) {
    const Measure& m = run.candidates[i].measure;
    if (!m.ok) continue;
    const double sc = score(settings.goal, m.time / d.time, d.heap > 0 ? m.heap / d.heap : 1);
    if (sc < best) {
      best = sc;
      run.verdict.candidate = static_cast<int>(i);
    }
  }
  if (run.verdict.candidate < 0) return;
  // Side by side: the default and the best take turns, so drift on the machine hits both.
  const Candidate& c = run.candidates[static_cast<std::size_t>(run.verdict.candidate)];
  Measure def, win;
  def.ok = win.ok = true;
  for (unsigned r = 0; r < confirmationRounds(settings); ++r) {
    for (Measure* m : {&def, &win}) {
      const Measure one = measureSpec(m == &def ? run.candidates.front().spec : c.spec, settings, 1, step);
      run.replays += settings.traces.size();
      if (!one.ok) {
        m->ok = false;
        m->failure = one.failure;
        continue;
      }
      m->seconds.push_back(one.time);
      m->heapBytes.push_back(one.heap);
    }
  }
  if (!def.ok || !win.ok || def.seconds.empty() || win.seconds.empty()) {
    run.verdict.candidate = -1;  // it failed when measured again: not a recommendation
    return;
  }
  // The confirmation's rounds join the search's in both candidates' figures (the search's
  // first rounds of the default ran cold).
  for (const auto& [to, from] : {std::pair{&run.candidates.front().measure, &def},
                                 std::pair{&run.candidates[static_cast<std::size_t>(run.verdict.candidate)].measure, &win}}) {
    to->seconds.insert(to->seconds.end(), from->seconds.begin(), from->seconds.end());
    to->heapBytes.insert(to->heapBytes.end(), from->heapBytes.begin(), from->heapBytes.end());
    to->time = median(to->seconds);
    to->heap = median(to->heapBytes);
    to->timeSpread = spread(to->seconds);
    to->heapSpread = spread(to->heapBytes);
  }
  // Each round's ratios (best over the default run just before it): drift that hits both
  // cancels; the spread of the rounds' ratios is the noise the gain must exceed.
  std::vector<double> times, heaps, scores;
  for (std::size_t i = 0; i < def.seconds.size() && i < win.seconds.size(); ++i) {
    const double t = def.seconds[i] > 0 ? win.seconds[i] / def.seconds[i] : 1;
    const double h = def.heapBytes[i] > 0 ? win.heapBytes[i] / def.heapBytes[i] : 1;
    times.push_back(t);
    heaps.push_back(h);
    scores.push_back(score(settings.goal, t, h));
  }
  run.verdict.timeRatio = median(times);
  run.verdict.heapRatio = median(heaps);
  run.verdict.timeNoise = spread(times);
  run.verdict.heapNoise = spread(heaps);
  run.verdict.goalNoise = spread(scores);
  const double gain = 1 - median(scores);
  run.verdict.significant = gain > std::max(run.verdict.goalNoise, kSmallestGain);
}

}  // namespace strata::tune
