// `strata tune`'s tune.json (tuneJson in tune_report.hpp): format strata-tune-1, every
// setting tried with its measures and the command lines that use it, each allocator's best,
// and the live check.
#include <cstdio>

#include "support/json.hpp"
#include "tune/tune_report.hpp"

namespace strata::tune {
namespace {

using support::jsonString;

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string boolean(bool b) { return b ? "true" : "false"; }

std::string measureJson(const Measure& m) {
  std::string j = "{\"ok\": " + boolean(m.ok);
  if (!m.ok) return j + ", \"failure\": " + jsonString(m.failure) + "}";
  j += fmt(", \"time_seconds\": %.6f", m.time) + fmt(", \"peak_heap_bytes\": %.0f", m.heap) +
       fmt(", \"time_spread\": %.4f", m.timeSpread) + fmt(", \"heap_spread\": %.4f", m.heapSpread);
  return j + "}";
}

// The two command lines that run the app on a candidate.
std::string linesJson(const AllocatorRun& run, const Candidate& c, const std::string& app) {
  return ", \"environment_line\": " + jsonString(environmentLine(run, c, app)) +
         ", \"strata_run_line\": " + jsonString(strataRunLine(c, app));
}

std::string candidateJson(const AllocatorRun& run, const Candidate& c, const std::string& app) {
  return "{\"setting\": " + jsonString(c.description) + ", \"spec\": " + jsonString(c.spec) +
         ", \"default\": " + boolean(c.isDefault) + ", \"measure\": " + measureJson(c.measure) +
         linesJson(run, c, app) + "}";
}

std::string bestJson(const AllocatorRun& run, const std::string& app) {
  const Verdict& v = run.verdict;
  if (v.candidate < 0) return "null";
  const Candidate& c = run.candidates[static_cast<std::size_t>(v.candidate)];
  return "{\"setting\": " + jsonString(c.description) + ", \"spec\": " + jsonString(c.spec) +
         fmt(", \"time_ratio\": %.4f", v.timeRatio) + fmt(", \"heap_ratio\": %.4f", v.heapRatio) +
         fmt(", \"time_noise\": %.4f", v.timeNoise) + fmt(", \"heap_noise\": %.4f", v.heapNoise) +
         fmt(", \"goal_noise\": %.4f", v.goalNoise) + ", \"significant\": " +
         boolean(v.significant) + linesJson(run, c, app) + "}";
}

std::string runJson(const AllocatorRun& run, const std::string& app) {
  std::string j = "{\"name\": " + jsonString(run.name) + ", \"version\": " +
                  jsonString(run.version) + ", \"library\": " + jsonString(run.library) +
                  ", \"composition\": " + boolean(run.composition) +
                  ", \"replays\": " + std::to_string(run.replays) + ", \"candidates\": [";
  for (std::size_t i = 0; i < run.candidates.size(); ++i)
    j += (i ? ", " : "") + candidateJson(run, run.candidates[i], app);
  return j + "], \"best\": " + bestJson(run, app) + "}";
}

std::string liveJson(const LiveCheck& l) {
  return "{\"allocator\": " + jsonString(l.allocator) + ", \"ok\": " + boolean(l.ok) +
         ", \"detail\": " + jsonString(l.detail) +
         fmt(", \"default_seconds\": %.6f", l.defaultSeconds) +
         fmt(", \"best_seconds\": %.6f", l.bestSeconds) +
         ", \"default_rss_bytes\": " + std::to_string(l.defaultRss) +
         ", \"best_rss_bytes\": " + std::to_string(l.bestRss) + "}";
}

// A JSON array of `items`, each rendered by `one`.
template <typename T, typename F>
std::string array(const std::vector<T>& items, F&& one) {
  std::string j = "[";
  for (std::size_t i = 0; i < items.size(); ++i) j += (i ? ", " : "") + one(items[i]);
  return j + "]";
}

}  // namespace

std::string tuneJson(const TuneReport& r) {
  const auto string = [](const std::string& s) { return jsonString(s); };
  return "{\"format\": \"strata-tune-1\", \"goal\": " + jsonString(goalName(r.settings.goal)) +
         ", \"seed\": " + std::to_string(r.settings.seed) +
         ", \"budget\": " + jsonString(r.budgetText) +
         ", \"repeat\": " + std::to_string(r.settings.repeat) +
         ", \"spaces\": " + jsonString(r.spacesPath) + ", \"app\": " + jsonString(r.appLine) +
         ", \"candidates_file\": \"candidates.csv\"" +
         ", \"traces\": " + array(r.settings.traces, string) +
         ", \"glibc_default\": " + measureJson(r.glibc) +
         ", \"skipped\": " + array(r.skipped, string) +
         ", \"allocators\": " + array(r.runs, [&r](const AllocatorRun& a) { return runJson(a, r.appLine); }) +
         ", \"live\": " + array(r.live, liveJson) + "}\n";
}

}  // namespace strata::tune
