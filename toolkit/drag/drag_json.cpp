// `strata drag`'s drag.json and the top sites it shares with the text report (drag_json.hpp).
#include "drag/drag_json.hpp"

#include <cmath>
#include <cstdio>

#include "support/json.hpp"
#include "tracetools/site_report.hpp"

namespace strata::drag {
namespace {

using support::jsonString;

// A number as JSON: finite with full precision, else null (JSON has no infinity).
std::string number(double v) { return support::jsonNumber(v); }

std::string boolean(bool b) { return b ? "true" : "false"; }

std::string dragValue(const DragResult& r) { return r.dragUnbounded ? "null" : number(r.drag); }

std::string increaseValue(const DragResult& r) {
  return r.peakIdeal == 0 ? "null" : number(r.increasePercent);
}

// One entry of "processes"; the figures null for a process not analysed.
std::string processJson(const DragProcess& p, bool shown) {
  const DragResult& r = p.result;
  const auto figure = [&p](const std::string& v) { return p.analysed ? v : std::string("null"); };
  return "{\"pid\": " + std::to_string(p.pid) + ", \"program\": " + jsonString(p.program) +
         ", \"analysed\": " + boolean(p.analysed) + ", \"shown\": " + boolean(shown) +
         ", \"drag\": " + figure(dragValue(r)) +
         ", \"drag_unbounded\": " + boolean(p.analysed && r.dragUnbounded) +
         ", \"peak_actual_bytes\": " + figure(std::to_string(r.peakActual)) +
         ", \"peak_ideal_bytes\": " + figure(std::to_string(r.peakIdeal)) +
         ", \"increase_percent\": " + figure(increaseValue(r)) + "}";
}

// "shown": the reported process's figures in full.
std::string shownJson(const DragProcess& p) {
  const DragResult& r = p.result;
  return "{\"pid\": " + std::to_string(p.pid) + ", \"program\": " + jsonString(p.program) +
         ", \"drag\": " + dragValue(r) + ", \"drag_unbounded\": " + boolean(r.dragUnbounded) +
         ", \"actual_area\": " + number(r.actualArea) + ", \"ideal_area\": " + number(r.idealArea) +
         ", \"peak_actual_bytes\": " + std::to_string(r.peakActual) +
         ", \"peak_ideal_bytes\": " + std::to_string(r.peakIdeal) +
         ", \"increase_percent\": " + increaseValue(r) +
         ", \"final_clock\": " + std::to_string(r.finalClock) +
         ", \"objects\": " + std::to_string(r.objectCount) +
         ", \"events\": " + std::to_string(r.events) +
         ", \"uncovered_objects\": " + std::to_string(r.uncoveredObjects) +
         ", \"uncovered_bytes\": " + std::to_string(r.uncoveredBytes) +
         ", \"trace_complete\": " + boolean(r.traceComplete) +
         ", \"last_use_complete\": " + boolean(r.lastUseComplete) + "}";
}

std::string frameJson(const tracetools::SourceFrame& f) {
  return "{\"function\": " + jsonString(f.function) + ", \"file\": " + jsonString(f.file) +
         ", \"line\": " + std::to_string(f.line) + ", \"module\": " + jsonString(f.module) + "}";
}

std::string sitesJson(const DragResult& r, const SymbolizedSites& sites) {
  std::string j = "[";
  for (std::size_t i = 0; i < sites.sites.size(); ++i) {
    const SiteDrag& s = sites.sites[i];
    j += std::string(i ? ", " : "") + "{\"site\": " + std::to_string(s.site) +
         ", \"drag\": " + number(s.drag) + ", \"share_percent\": " + number(sharePercent(r, s)) +
         ", \"bytes\": " + std::to_string(s.bytes) + ", \"objects\": " + std::to_string(s.objects) +
         ", \"stack\": [";
    for (std::size_t k = 0; k < sites.stacks[i].size(); ++k)
      j += (k ? ", " : "") + frameJson(sites.stacks[i][k]);
    j += "]}";
  }
  return j + "]";
}

}  // namespace

SymbolizedSites symbolizeTopSites(const DragResult& r, std::size_t top) {
  SymbolizedSites out;
  if (!r.sites.present) return out;
  out.sites = topDragSites(r, top);
  // The frames shown of a site: its innermost ones, as `strata stats --sites` shows them.
  const auto depthOf = [&](std::uint64_t site) {
    return site < r.sites.frames.size() ? tracetools::shownFrames(r.sites, site) : 0;
  };
  std::vector<std::uint64_t> addresses;
  for (const SiteDrag& s : out.sites)
    for (std::size_t k = 0; k < depthOf(s.site); ++k)
      addresses.push_back(r.sites.frames[s.site][k]);
  tracetools::Symbolizer symbolizer(r.sites.modules);
  const std::vector<tracetools::SourceFrame> frames = symbolizer.resolve(addresses);
  std::size_t next = 0;
  for (const SiteDrag& s : out.sites) {
    const std::size_t depth = depthOf(s.site);
    out.stacks.emplace_back(frames.begin() + static_cast<long>(next),
                            frames.begin() + static_cast<long>(next + depth));
    next += depth;
  }
  out.warnings = symbolizer.warnings();
  return out;
}

double sharePercent(const DragResult& r, const SiteDrag& s) {
  const double excess = r.actualArea - r.idealArea;
  return excess > 0 ? 100.0 * s.drag / excess : 0.0;
}

std::string dragJson(const DragRunFacts& facts, const std::vector<DragProcess>& processes,
                     const DragProcess& shown, const SymbolizedSites& sites) {
  std::string j = "{\"format\": \"strata-drag-1\", \"command\": " + jsonString(facts.command) +
                  ", \"status\": " + jsonString(facts.status) +
                  ", \"seconds\": " + number(facts.seconds) +
                  ", \"succeeded\": " + boolean(facts.succeeded) + ", \"notes\": [";
  const std::vector<std::string> notes = reportNotes(facts, shown);
  for (std::size_t i = 0; i < notes.size(); ++i) j += (i ? ", " : "") + jsonString(notes[i]);
  j += "], \"processes\": [";
  for (std::size_t i = 0; i < processes.size(); ++i)
    j += (i ? ", " : "") + processJson(processes[i], &processes[i] == &shown);
  j += "], \"shown\": " + shownJson(shown) + ", \"curves_file\": \"curves.csv\", \"sites\": " +
       sitesJson(shown.result, sites);
  return j + "}\n";
}

}  // namespace strata::drag
