// The tables and CSV of `strata tune` (tune_report.hpp; the JSON is tune_json.cpp's).
#include "tune/tune_report.hpp"

#include <algorithm>
#include <cstdio>

#include "support/process.hpp"
#include "support/format.hpp"

namespace strata::tune {
namespace {

using support::format;

std::string mib(double bytes) { return support::mib(bytes) + " MiB"; }
std::string ratio(double r) { return r > 0 ? format("%.2f", r) : "-"; }
std::string percent(double x) { return format("%.1f%%", x * 100); }

// One point per setting that ran: its ratios to glibc's default (to its own allocator's
// default when glibc's is not known).
struct Point {
  const AllocatorRun* run;
  const Candidate* c;
  double time, heap;
  bool front = false;
};

std::vector<Point> points(const TuneReport& r) {
  std::vector<Point> out;
  for (const AllocatorRun& run : r.runs) {
    if (run.candidates.empty() || !run.candidates.front().measure.ok) continue;
    const Measure& ref = r.glibc.ok ? r.glibc : run.candidates.front().measure;
    for (const Candidate& c : run.candidates)
      if (c.measure.ok)
        out.push_back({&run, &c, c.measure.time / ref.time, ref.heap > 0 ? c.measure.heap / ref.heap : 1});
  }
  for (Point& p : out) {
    p.front = true;
    for (const Point& q : out)
      if ((q.time <= p.time && q.heap <= p.heap) && (q.time < p.time || q.heap < p.heap)) {
        p.front = false;
        break;
      }
  }
  return out;
}

std::string shellQuote(const std::string& s) { return support::shellLine({s}); }

}  // namespace

std::string environmentLine(const AllocatorRun& run, const Candidate& c, const std::string& app) {
  std::string line;
  if (!run.library.empty()) line += "LD_PRELOAD=" + shellQuote(run.library) + " ";
  for (const std::string& e : c.environment) {
    const std::size_t eq = e.find('=');
    line += e.substr(0, eq + 1) + shellQuote(e.substr(eq + 1)) + " ";
  }
  return line + app;
}

std::string strataRunLine(const Candidate& c, const std::string& app) {
  return "strata run --allocator " + shellQuote(c.spec) + " -- " + app;
}

std::string formatIntro(const TuneReport& r) {
  return "strata tune: " + r.intro + "; goal " + goalName(r.settings.goal) + ", budget " +
         r.budgetText + ", seed " + std::to_string(r.settings.seed) + ", " +
         std::to_string(r.settings.repeat) + (r.settings.repeat == 1 ? " replay" : " replays") +
         " per setting (medians; spread = (max - min) / median)\n";
}

std::string formatRun(const TuneReport& r, const AllocatorRun& run) {
  std::string out = "\n" + run.name + (run.version.empty() ? "" : " (" + run.version + ")") + ": ";
  if (run.candidates.empty()) return out + "not measured\n";
  const Candidate& def = run.candidates.front();
  std::size_t failed = 0;
  for (const Candidate& c : run.candidates) failed += c.measure.ok ? 0 : 1;
  const std::size_t n = run.candidates.size();
  out += std::to_string(n) + (run.composition ? " build" : n == 1 ? " setting" : " settings") +
         " tried, " + std::to_string(run.replays) + (run.replays == 1 ? " replay" : " replays") +
         (failed > 0 ? ", " + std::to_string(failed) + " failed" : "") + "\n";
  if (!def.measure.ok) return out + "  the default fails on this trace: " + def.measure.failure + "\n";
  const Measure& g = r.glibc;
  const auto row = [&](const std::string& label, const Measure& m, double tr, double hr) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "  %-34s %9.3f s %6s %6s %11s %6s %6s\n", label.c_str(), m.time,
                  ratio(tr).c_str(), g.ok ? ratio(m.time / g.time).c_str() : "-",
                  mib(m.heap).c_str(), ratio(hr).c_str(),
                  g.ok && g.heap > 0 ? ratio(m.heap / g.heap).c_str() : "-");
    return std::string(buf);
  };
  char head[256];
  std::snprintf(head, sizeof head, "  %-34s %11s %6s %6s %11s %6s %6s\n", "", "time", "/def", "/glibc",
                "peak heap", "/def", "/glibc");
  out += head;
  out += row(run.composition ? "built" : "default", def.measure, 1, 1);
  if (run.composition) {
    out += "  use: " + environmentLine(run, def, r.appLine) + "\n";
    return out;
  }
  const Verdict& v = run.verdict;
  if (v.candidate < 0) {
    out += "  best: the default (no setting tried scored better for the goal)\n";
  } else {
    const Candidate& c = run.candidates[static_cast<std::size_t>(v.candidate)];
    std::string label = c.description;
    if (label.size() > 34) label = label.substr(0, 31) + "...";
    Measure confirmed = def.measure;
    confirmed.time = def.measure.time * v.timeRatio;
    confirmed.heap = def.measure.heap * v.heapRatio;
    out += row(label, confirmed, v.timeRatio, v.heapRatio);
    if (c.description.size() > 34) out += "    (" + c.description + ")\n";
    out += "  side by side with the default, " + std::to_string(confirmationRounds(r.settings)) +
           " rounds: time " + ratio(v.timeRatio) + "x (noise " + percent(v.timeNoise) +
           "), peak heap " + ratio(v.heapRatio) + "x (noise " + percent(v.heapNoise) + ")\n";
    if (v.significant) {
      out += "  gain for the " + std::string(goalName(r.settings.goal)) + " goal: " +
             percent(1 - score(r.settings.goal, v.timeRatio, v.heapRatio)) + ", beyond its noise (" +
             percent(v.goalNoise) + ")\n";
      out += "  use: " + environmentLine(run, c, r.appLine) + "\n";
      out += "   or: " + strataRunLine(c, r.appLine) + "\n";
    } else {
      out += "  no " + std::string(goalName(r.settings.goal)) +
             " gain beyond the noise (or under 1%): keep the default";
      // One of the two may still have moved beyond its own noise: say so, for the other goals.
      std::string beyond;
      if (v.heapRatio < 1 - std::max(v.heapNoise, 0.01))
        beyond = "peak heap " + percent(v.heapRatio - 1) + " beyond its noise";
      else if (v.timeRatio < 1 - std::max(v.timeNoise, 0.01))
        beyond = "time " + percent(v.timeRatio - 1) + " beyond its noise";
      out += beyond.empty() ? "\n" : " (" + beyond + ": try --goal " +
                                          (beyond[0] == 'p' ? "memory" : "time") + ")\n";
    }
  }
  for (const Candidate& c : run.candidates)
    if (!c.measure.ok) out += "  failed: " + c.description + ": " + c.measure.failure + "\n";
  return out;
}

std::string formatFront(const TuneReport& r) {
  const std::vector<Point> ps = points(r);
  if (ps.empty()) return {};
  std::vector<const Point*> front;
  for (const Point& p : ps)
    if (p.front) front.push_back(&p);
  std::sort(front.begin(), front.end(), [](const Point* a, const Point* b) { return a->time < b->time; });
  std::string out = "\nPareto front of time against peak heap (ratios to " +
                    std::string(r.glibc.ok ? "glibc's default" : "each allocator's default") +
                    "; every setting tried is in candidates.csv):\n";
  for (const Point* p : front) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "  time %5.2f  peak heap %5.2f  %s %s\n", p->time, p->heap,
                  p->run->name.c_str(), p->c->description.c_str());
    out += buf;
  }
  return out;
}

std::string formatLive(const TuneReport& r) {
  if (r.live.empty()) return {};
  std::string out = "\nLive check: " + r.appLine + " run on each allocator's default and best setting (" +
                    "medians of " + std::to_string(r.settings.repeat) + " runs):\n";
  char head[256];
  std::snprintf(head, sizeof head, "  %-14s %14s %14s %16s %16s\n", "allocator", "time predicted",
                "time live", "memory predicted", "peak RSS live");
  out += head;
  for (const LiveCheck& l : r.live) {
    const AllocatorRun* run = nullptr;
    for (const AllocatorRun& a : r.runs)
      if (a.name == l.allocator) run = &a;
    if (run == nullptr) continue;
    if (!l.ok) {
      out += "  " + l.allocator + ": " + l.detail + "\n";
      continue;
    }
    char buf[256];
    std::snprintf(buf, sizeof buf, "  %-14s %13.2fx %13.2fx %15.2fx %15.2fx\n", l.allocator.c_str(),
                  run->verdict.timeRatio, l.defaultSeconds > 0 ? l.bestSeconds / l.defaultSeconds : 0,
                  run->verdict.heapRatio,
                  l.defaultRss > 0 ? static_cast<double>(l.bestRss) / static_cast<double>(l.defaultRss) : 0);
    out += buf;
  }
  return out;
}

std::string candidatesCsv(const TuneReport& r) {
  std::string csv = "allocator,setting,time_seconds,peak_heap_bytes,time_ratio,heap_ratio,default,best,front\n";
  for (const Point& p : points(r)) {
    const bool best = p.run->verdict.candidate >= 0 && p.run->verdict.significant &&
                      &p.run->candidates[static_cast<std::size_t>(p.run->verdict.candidate)] == p.c;
    std::string setting = p.c->description;
    std::replace(setting.begin(), setting.end(), ',', ';');
    char buf[512];
    std::snprintf(buf, sizeof buf, "%s,%s,%.6f,%.0f,%.4f,%.4f,%d,%d,%d\n", p.run->name.c_str(),
                  setting.c_str(), p.c->measure.time, p.c->measure.heap, p.time, p.heap,
                  p.c->isDefault ? 1 : 0, best ? 1 : 0, p.front ? 1 : 0);
    csv += buf;
  }
  return csv;
}

}  // namespace strata::tune
