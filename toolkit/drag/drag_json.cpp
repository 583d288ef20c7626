// `strata drag`'s drag.json and the top sites it shares with the text report (drag_json.hpp).
#include "drag/drag_json.hpp"

#include <optional>

#include "support/json_writer.hpp"
#include "tracetools/site_report.hpp"

namespace strata::drag {
namespace {

using support::JsonWriter;

// The figures that may be null: the drag when unbounded, the increase when the ideal peak is 0.
std::optional<double> dragValue(const DragResult& r) {
  return r.dragUnbounded ? std::nullopt : std::optional(r.drag);
}

std::optional<double> increaseValue(const DragResult& r) {
  return r.peakIdeal == 0 ? std::nullopt : std::optional(r.increasePercent);
}

// One entry of "processes"; the figures null for a process not analysed.
void writeProcess(JsonWriter& w, const DragProcess& p, bool shown) {
  const DragResult& r = p.result;
  const auto figure = [&p](auto v) { return p.analysed ? std::optional(v) : std::nullopt; };
  w.object().field("pid", p.pid).field("program", p.program).field("analysed", p.analysed);
  w.field("shown", shown).field("drag", p.analysed ? dragValue(r) : std::nullopt);
  w.field("drag_unbounded", p.analysed && r.dragUnbounded);
  w.field("peak_actual_bytes", figure(r.peakActual)).field("peak_ideal_bytes", figure(r.peakIdeal));
  w.field("increase_percent", p.analysed ? increaseValue(r) : std::nullopt).end();
}

// "shown": the reported process's figures in full.
void writeShown(JsonWriter& w, const DragProcess& p) {
  const DragResult& r = p.result;
  w.object("shown").field("pid", p.pid).field("program", p.program);
  w.field("drag", dragValue(r)).field("drag_unbounded", r.dragUnbounded);
  w.field("actual_area", r.actualArea).field("ideal_area", r.idealArea);
  w.field("peak_actual_bytes", r.peakActual).field("peak_ideal_bytes", r.peakIdeal);
  w.field("increase_percent", increaseValue(r)).field("final_clock", r.finalClock);
  w.field("objects", r.objectCount).field("events", r.events);
  w.field("uncovered_objects", r.uncoveredObjects).field("uncovered_bytes", r.uncoveredBytes);
  w.field("trace_complete", r.traceComplete).field("last_use_complete", r.lastUseComplete).end();
}

void writeSites(JsonWriter& w, const DragResult& r, const SymbolizedSites& sites) {
  w.array("sites");
  for (std::size_t i = 0; i < sites.sites.size(); ++i) {
    const SiteDrag& s = sites.sites[i];
    w.object().field("site", s.site).field("drag", s.drag);
    w.field("share_percent", sharePercent(r, s)).field("bytes", s.bytes);
    w.field("objects", s.objects).array("stack");
    for (const tracetools::SourceFrame& f : sites.stacks[i])
      w.object().field("function", f.function).field("file", f.file).field("line", f.line)
          .field("module", f.module).end();
    w.end().end();
  }
  w.end();
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
  JsonWriter w;  // doubles with full precision
  w.object().field("format", "strata-drag-1").field("command", facts.command);
  w.field("status", facts.status).field("seconds", facts.seconds);
  w.field("succeeded", facts.succeeded).array("notes", reportNotes(facts, shown));
  w.array("processes");
  for (const DragProcess& p : processes) writeProcess(w, p, &p == &shown);
  w.end();
  writeShown(w, shown);
  w.field("curves_file", "curves.csv");
  writeSites(w, shown.result, sites);
  return w.end().text();
}

}  // namespace strata::drag
