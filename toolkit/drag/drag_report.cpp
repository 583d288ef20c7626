// `strata drag`'s report, curves and plot (drag_report.hpp).
#include "drag/drag_report.hpp"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>

#include "drag/drag_json.hpp"
#include "support/error.hpp"
#include "support/files.hpp"
#include "support/process.hpp"
#include "support/helpers.hpp"
#include "support/python.hpp"
#include "support/format.hpp"

namespace strata::drag {
namespace {

namespace fs = std::filesystem;

using support::format;

std::string bytesText(std::uint64_t b) { return support::exactBytesScaled(b); }

// The table of sites by drag: each site's share of the drag area, bytes, objects and frames.
std::string sitesTable(const DragResult& r, const SymbolizedSites& top) {
  if (!r.sites.present)
    return "\nallocation sites: not recorded (strata drag --sites records them)\n";
  if (top.sites.empty()) return "\nallocation sites: no site's objects outlive their last use\n";
  std::string out = "\ntop " + std::to_string(top.sites.size()) +
                    " sites by drag (memory held after last use, as a share of all of it):\n";
  for (std::size_t i = 0; i < top.sites.size(); ++i) {
    const SiteDrag& s = top.sites[i];
    out += "  site " + std::to_string(s.site) + ": " + format("%.1f%%", sharePercent(r, s)) +
           " of the drag, " + bytesText(s.bytes) + " in " + std::to_string(s.objects) +
           " objects\n";
    if (top.stacks[i].empty()) out += "      (unknown site)\n";
    for (std::size_t k = 0; k < top.stacks[i].size(); ++k)
      out += std::string(k == 0 ? "      at " : "      <- ") +
             tracetools::describe(top.stacks[i][k]) + "\n";
  }
  for (const std::string& w : top.warnings) out += "  note: " + w + "\n";
  return out;
}

std::string dragText(const DragResult& r) {
  return r.dragUnbounded ? std::string("infinite") : format("%.3f", r.drag);
}

// A line per analysed process, when there are several.
std::string processTable(const std::vector<DragProcess>& processes, const DragProcess& shown) {
  std::size_t analysed = 0;
  for (const DragProcess& p : processes) analysed += p.analysed;
  if (analysed < 2) return {};
  std::string out = "  processes (the one marked * is reported below):\n";
  char line[512];
  std::snprintf(line, sizeof line, "    %-8s %12s %14s %10s %12s %12s  %s\n", "pid", "objects",
                "allocated", "drag", "peak live", "if freed", "program");
  out += line;
  for (const DragProcess& p : processes) {
    if (!p.analysed) continue;
    const DragResult& r = p.result;
    std::snprintf(line, sizeof line, "  %s %-8ld %12" PRIu64 " %14" PRIu64 " %10s %12" PRIu64
                  " %12" PRIu64 "  %s\n", &p == &shown ? "* " : "  ", p.pid, r.objectCount,
                  r.finalClock, dragText(r).c_str(), r.peakActual, r.peakIdeal,
                  p.program.c_str());
    out += line;
  }
  return out + "\n";
}

std::string reportText(const DragRunFacts& f, const std::vector<DragProcess>& processes,
                       const DragProcess& shown, const IdealTraceCounts& ideal,
                       const SymbolizedSites& top) {
  const DragResult& r = shown.result;
  std::string out = "strata drag: " + f.command + "\n";
  out += "  ran " + format("%.2f s", f.seconds) + " under Valgrind's drag tool: " + f.status +
         "\n";
  for (const std::string& n : reportNotes(f, shown)) out += "  note: " + n + "\n";
  out += "\n" + processTable(processes, shown);
  out += "  process            " + std::to_string(shown.pid) + " (" + shown.program + "), trace " +
         shown.trace.filename().string() + "\n";
  out += "  objects            " + std::to_string(r.objectCount) + ", " +
         bytesText(r.finalClock) + " allocated over " + std::to_string(r.events) + " events\n";
  out += "  total drag         " + dragText(r) + "   (memory held over memory needed, over "
         "allocation time; 1.0 is ideal)\n";
  if (r.dragUnbounded)
    out += "                     (no object is used after the allocation that made it, yet "
           "objects are kept)\n";
  out += "  peak live          " + bytesText(r.peakActual) + " as the program ran\n";
  out += "  peak if freed      " + bytesText(r.peakIdeal) + " had every object been freed right "
         "after its last use\n";
  out += "  increase           " +
         (r.peakIdeal == 0 ? std::string("n/a") : format("%.1f%%", r.increasePercent)) + "\n";
  out += sitesTable(r, top);
  out += "\nfiles in " + f.dir.string() + "/: report.txt, drag.json, curves.csv, drag.png, drag.svg, "
         "program.trace*, last-use.*.bin, valgrind.*.log, ideal.trace (" +
         std::to_string(ideal.earlyReleases) + " objects freed right after their last use: "
         "strata compare " + shown.trace.string() + " " + (f.dir / "ideal.trace").string() +
         ")\n";
  return out;
}

// curves.csv: the live and ideal bytes against the bytes allocated so far.
std::string curvesCsv(const DragResult& r) {
  std::string csv = "allocated_bytes,live_bytes,ideal_live_bytes\n";
  for (const DragPoint& p : r.curve)
    csv += std::to_string(p.clock) + ',' + std::to_string(p.actualBytes) + ',' +
           std::to_string(p.idealBytes) + '\n';
  return csv;
}

}  // namespace

std::vector<std::string> reportNotes(const DragRunFacts& f, const DragProcess& shown) {
  const DragResult& r = shown.result;
  std::vector<std::string> notes = f.notes;
  if (!f.succeeded)
    notes.push_back("the program did not finish normally: the figures cover the run up to "
                    "where it ended");
  if (!r.traceComplete)
    notes.push_back("the trace has no trailer (the program crashed or was killed): every event "
                    "up to its last write is used");
  if (!shown.lastUse.complete)
    notes.push_back("the last-use file is incomplete (" + shown.lastUse.incomplete +
                    "): objects it does not cover count as used until they end");
  if (r.uncoveredObjects != 0)
    notes.push_back(std::to_string(r.uncoveredObjects) + " objects (" +
                    bytesText(r.uncoveredBytes) + ") have no last use: counted as used until "
                    "they end");
  return notes;
}

DragReport writeDragReport(const DragRunFacts& facts, const std::vector<DragProcess>& processes,
                           const DragProcess& shown, const IdealTraceCounts& ideal) {
  const DragResult& r = shown.result;
  const SymbolizedSites top = symbolizeTopSites(r, facts.top);
  const std::string text = reportText(facts, processes, shown, ideal, top);
  support::writeFileAtomically((facts.dir / "report.txt").string(), text);
  support::writeFileAtomically((facts.dir / "drag.json").string(),
                               dragJson(facts, processes, shown, top));
  support::writeFileAtomically((facts.dir / "curves.csv").string(), curvesCsv(r));
  // drag.png and drag.svg, with drag_plot.py.
  return {text, support::runPlotScript(support::HelperId::DragPlot, {facts.dir.string()})};
}

}  // namespace strata::drag
