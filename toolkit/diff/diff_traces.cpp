// diffTraces (diff_model.hpp): the statistics and sites of both traces, the sites matched by
// their symbolized stacks, and each trace's live-bytes curve (computeStats keeps it).
#include <filesystem>

#include "diff/diff_model.hpp"
#include "diff/diff_sites.hpp"
#include "support/error.hpp"
#include "tracetools/site_report.hpp"
#include "tracetools/trace_stats.hpp"

namespace strata::diff {
namespace {

namespace tt = strata::tracetools;

struct TraceSide {
  tt::TraceStats stats;
  tt::SiteStats sites;
};

TraceSide readTrace(const std::string& path) {
  TraceSide side;
  side.stats = tt::computeStats(path, &side.sites);
  return side;
}

RunSummary summary(const std::string& path, const tt::TraceStats& s) {
  return RunSummary{.path = path,
                    .kind = "trace",
                    .program = s.program,
                    .peakLiveBytes = s.peakLiveBytes,
                    .totalBytes = s.totalBytes,
                    .allocations = s.totalObjects};
}

// The program's live bytes over events, as computeStats kept them (downsampled, peak kept).
Curve curveOf(const TraceSide& side, const std::string& run) {
  const tt::LiveCurve& c = side.sites.curve;
  Curve out{.label = "live bytes", .run = run, .x = "events", .xs = {}, .ys = {}};
  for (std::size_t i = 0; i < c.events.size() && i < c.liveBytes.size(); ++i) {
    out.xs.push_back(static_cast<double>(c.events[i]));
    out.ys.push_back(static_cast<double>(c.liveBytes[i]));
  }
  return out;
}

}  // namespace

DiffResult diffTraces(const std::string& a, const std::string& b, const DiffOptions& options) {
  const TraceSide sa = readTrace(a);
  const TraceSide sb = readTrace(b);
  checkSamePrograms(sa.stats.program, sb.stats.program, "a trace", options);
  DiffResult r;
  r.a = summary(a, sa.stats);
  r.b = summary(b, sb.stats);
  r.thresholdPercent = options.thresholdPercent;
  r.sitesCompared = sa.sites.present && sb.sites.present;
  if (r.sitesCompared) {
    r.sites = matchSites(symbolizedSites(sa.sites, tt::kShownFrames, r.notes),
                         symbolizedSites(sb.sites, tt::kShownFrames, r.notes), "");
  } else {
    const std::string which = !sa.sites.present && !sb.sites.present ? "neither trace carries"
                              : !sa.sites.present                    ? "A carries no"
                                                                     : "B carries no";
    r.notes.push_back(which +
                      " allocation sites (record with `strata record --sites`): "
                      "the runs are compared as a whole");
  }
  r.curves.push_back(curveOf(sa, "a"));
  r.curves.push_back(curveOf(sb, "b"));
  judge(r);
  return r;
}

}  // namespace strata::diff
