// `strata drag`'s report, curves and plot (drag_report.hpp).
#include "drag_report.hpp"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>

#include "error.hpp"
#include "process.hpp"
#include "helpers.hpp"
#include "python.hpp"
#include "site_report.hpp"
#include "symbolize.hpp"

namespace strata::cli {
namespace {

namespace fs = std::filesystem;
using tracetools::DragResult;

// "12,345 B (12.1 KiB)" style: bytes exactly, and a readable size beside large ones.
std::string bytesText(std::uint64_t b) {
  char buf[64];
  if (b < 10 * 1024) {
    std::snprintf(buf, sizeof buf, "%" PRIu64 " B", b);
  } else if (b < 10ull * 1024 * 1024) {
    std::snprintf(buf, sizeof buf, "%" PRIu64 " B (%.1f KiB)", b, static_cast<double>(b) / 1024);
  } else {
    std::snprintf(buf, sizeof buf, "%" PRIu64 " B (%.1f MiB)", b,
                  static_cast<double>(b) / (1024.0 * 1024.0));
  }
  return buf;
}

std::string format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// The table of sites by drag: each site's share of the drag area, bytes, objects and frames.
std::string sitesTable(const DragResult& r, std::size_t top) {
  if (!r.sites.present)
    return "\nallocation sites: not recorded (strata drag --sites records them)\n";
  const std::vector<tracetools::SiteDrag> best = tracetools::topDragSites(r, top);
  if (best.empty()) return "\nallocation sites: no site's objects outlive their last use\n";
  const double excess = r.actualArea - r.idealArea;
  // The frames shown of a site: its innermost ones, as `strata stats --sites` shows them.
  const auto depthOf = [&](std::uint64_t site) {
    return site < r.sites.frames.size() ? tracetools::shownFrames(r.sites, site) : 0;
  };
  std::vector<std::uint64_t> addresses;
  for (const tracetools::SiteDrag& s : best)
    for (std::size_t k = 0; k < depthOf(s.site); ++k)
      addresses.push_back(r.sites.frames[s.site][k]);
  tracetools::Symbolizer symbolizer(r.sites.modules);
  const std::vector<tracetools::SourceFrame> frames = symbolizer.resolve(addresses);
  std::string out = "\ntop " + std::to_string(best.size()) +
                    " sites by drag (memory held after last use, as a share of all of it):\n";
  std::size_t next = 0;
  for (const tracetools::SiteDrag& s : best) {
    out += "  site " + std::to_string(s.site) + ": " +
           format("%.1f%%", excess > 0 ? 100.0 * s.drag / excess : 0.0) + " of the drag, " +
           bytesText(s.bytes) + " in " + std::to_string(s.objects) + " objects\n";
    const std::size_t depth = depthOf(s.site);
    if (depth == 0) out += "      (unknown site)\n";
    for (std::size_t k = 0; k < depth; ++k)
      out += std::string(k == 0 ? "      at " : "      <- ") +
             tracetools::describe(frames[next++]) + "\n";
  }
  for (const std::string& w : symbolizer.warnings()) out += "  note: " + w + "\n";
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
                       const DragProcess& shown, const tracetools::IdealTraceCounts& ideal) {
  const tracetools::LastUseData& lastUse = shown.lastUse;
  const DragResult& r = shown.result;
  std::string out = "strata drag: " + f.command + "\n";
  out += "  ran " + format("%.2f s", f.seconds) + " under Valgrind's drag tool: " + f.status +
         "\n";
  for (const std::string& n : f.notes) out += "  note: " + n + "\n";
  if (!f.succeeded)
    out += "  note: the program did not finish normally: the figures cover the run up to "
           "where it ended\n";
  if (!r.traceComplete)
    out += "  note: the trace has no trailer (the program crashed or was killed): every event "
           "up to its last write is used\n";
  if (!lastUse.complete)
    out += "  note: the last-use file is incomplete (" + lastUse.incomplete +
           "): objects it does not cover count as used until they end\n";
  if (r.uncoveredObjects != 0)
    out += "  note: " + std::to_string(r.uncoveredObjects) + " objects (" +
           bytesText(r.uncoveredBytes) + ") have no last use: counted as used until they end\n";
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
  out += sitesTable(r, f.top);
  out += "\nfiles in " + f.dir.string() + "/: report.txt, curves.csv, drag.png, drag.svg, "
         "program.trace*, last-use.*.bin, valgrind.*.log, ideal.trace (" +
         std::to_string(ideal.earlyReleases) + " objects freed right after their last use: "
         "strata compare " + shown.trace.string() + " " + (f.dir / "ideal.trace").string() +
         ")\n";
  return out;
}

bool writeCurves(const fs::path& path, const DragResult& r) {
  std::ofstream out(path);
  out << "allocated_bytes,live_bytes,ideal_live_bytes\n";
  for (const tracetools::DragPoint& p : r.curve)
    out << p.clock << ',' << p.actualBytes << ',' << p.idealBytes << '\n';
  return static_cast<bool>(out.flush());
}

// Draws drag.png and drag.svg with drag_plot.py; a note on stderr when it cannot.
void drawPlot(const fs::path& dir) {
  const std::optional<std::string> python = findPython();
  if (!python) {
    std::fprintf(stderr, "strata drag: the plot needs python3-matplotlib (apt-get install "
                 "python3-matplotlib); the curves are in %s\n", (dir / "curves.csv").c_str());
    return;
  }
  support::ChildSpec spec;
  spec.argv = {*python, support::helperPath(support::HelperId::DragPlot), dir.string()};
  const support::ProcessResult r = support::runChild(spec);
  if (!r.succeeded())
    std::fprintf(stderr, "strata drag: the plot script failed (%s); the curves are in %s\n",
                 support::describeStatus(r).c_str(), (dir / "curves.csv").c_str());
}

}  // namespace

void writeDragReport(const DragRunFacts& facts, const std::vector<DragProcess>& processes,
                    const DragProcess& shown, const tracetools::IdealTraceCounts& ideal) {
  const DragResult& r = shown.result;
  const std::string text = reportText(facts, processes, shown, ideal);
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
  std::ofstream report(facts.dir / "report.txt");
  report << text;
  if (!report.flush() || !writeCurves(facts.dir / "curves.csv", r))
    throw support::Error("cannot write to " + facts.dir.string());
  drawPlot(facts.dir);
}

}  // namespace strata::cli
