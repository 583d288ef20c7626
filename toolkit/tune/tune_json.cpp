// `strata tune`'s tune.json (tuneJson in tune_report.hpp): format strata-tune-1, every
// setting tried with its measures and the command lines that use it, each allocator's best,
// and the live check.
#include "support/json_writer.hpp"
#include "tune/tune_report.hpp"

namespace strata::tune {
namespace {

using support::JsonWriter;

// The member `key`: how a setting measured (times with 6 decimals, spreads with 4).
void writeMeasure(JsonWriter& w, const char* key, const Measure& m) {
  w.object(key).field("ok", m.ok);
  if (!m.ok) {
    w.field("failure", m.failure).end();
    return;
  }
  w.fixed("time_seconds", m.time, 6).fixed("peak_heap_bytes", m.heap, 0);
  w.fixed("time_spread", m.timeSpread, 4).fixed("heap_spread", m.heapSpread, 4).end();
}

// The two command lines that run the app on a candidate.
void writeLines(JsonWriter& w, const AllocatorRun& run, const Candidate& c, const std::string& app) {
  w.field("environment_line", environmentLine(run, c, app));
  w.field("strata_run_line", strataRunLine(c, app));
}

void writeCandidate(JsonWriter& w, const AllocatorRun& run, const Candidate& c,
                    const std::string& app) {
  w.object().field("setting", c.description).field("spec", c.spec).field("default", c.isDefault);
  writeMeasure(w, "measure", c.measure);
  writeLines(w, run, c, app);
  w.end();
}

void writeBest(JsonWriter& w, const AllocatorRun& run, const std::string& app) {
  const Verdict& v = run.verdict;
  if (v.candidate < 0) {
    w.null("best");
    return;
  }
  const Candidate& c = run.candidates[static_cast<std::size_t>(v.candidate)];
  w.object("best").field("setting", c.description).field("spec", c.spec);
  w.fixed("time_ratio", v.timeRatio, 4).fixed("heap_ratio", v.heapRatio, 4);
  w.fixed("time_noise", v.timeNoise, 4).fixed("heap_noise", v.heapNoise, 4);
  w.fixed("goal_noise", v.goalNoise, 4).field("significant", v.significant);
  writeLines(w, run, c, app);
  w.end();
}

void writeRun(JsonWriter& w, const AllocatorRun& run, const std::string& app) {
  w.object().field("name", run.name).field("version", run.version).field("library", run.library);
  w.field("composition", run.composition).field("replays", run.replays).array("candidates");
  for (const Candidate& c : run.candidates) writeCandidate(w, run, c, app);
  w.end();
  writeBest(w, run, app);
  w.end();
}

void writeLive(JsonWriter& w, const LiveCheck& l) {
  w.object().field("allocator", l.allocator).field("ok", l.ok).field("detail", l.detail);
  w.fixed("default_seconds", l.defaultSeconds, 6).fixed("best_seconds", l.bestSeconds, 6);
  w.field("default_rss_bytes", l.defaultRss).field("best_rss_bytes", l.bestRss).end();
}

}  // namespace

std::string tuneJson(const TuneReport& r) {
  JsonWriter w;
  w.object().field("format", "strata-tune-1").field("goal", goalName(r.settings.goal));
  w.field("seed", r.settings.seed).field("budget", r.budgetText);
  w.field("repeat", r.settings.repeat).field("spaces", r.spacesPath).field("app", r.appLine);
  w.field("candidates_file", "candidates.csv").array("traces", r.settings.traces);
  writeMeasure(w, "glibc_default", r.glibc);
  w.array("skipped", r.skipped).array("allocators");
  for (const AllocatorRun& a : r.runs) writeRun(w, a, r.appLine);
  w.end().array("live");
  for (const LiveCheck& l : r.live) writeLive(w, l);
  return w.end().end().text();
}

}  // namespace strata::tune
