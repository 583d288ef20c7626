// The command itself run on every allocator (compare_steps.hpp): each run a fresh process
// with the allocator's library in LD_PRELOAD (nothing for glibc), stdin from /dev/null and
// stdout captured to live/<allocator>.run<N>.stdout; the allocators take turns within each
// of --runs rounds, and the median run by wall time is shown. Time, CPU and peak RSS come
// from wait4's resource usage; the resident size over time is sampled from /proc during each
// run, and the shown run's is written to series/live-<allocator>.csv. A run that crashes,
// exits non-zero or prints something other than the reference run (glibc's, else the first
// allocator's) marks its allocator failed.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <stdexcept>

#include "compare/compare_steps.hpp"
#include "support/error.hpp"
#include "support/files.hpp"
#include "support/process.hpp"

namespace strata::compare {

namespace {

// One allocator's row from its runs: every run's figures, the median run by wall time (or the
// first failed one), and whether each printed what the reference run did. Returns the index of
// the run shown.
std::size_t summarizeRuns(LiveRow& row, const std::vector<support::ProcessResult>& runs,
                          const std::vector<std::string>& outputs, const std::string& referenceOut,
                          const std::string& reference, const std::string& outDir) {
  std::error_code ec;
  std::size_t failedRun = runs.size();
  for (std::size_t i = 0; i < runs.size(); ++i) {
    row.wallRuns.push_back(runs[i].wallSeconds);
    row.cpuRuns.push_back(runs[i].cpuSeconds());
    row.rssRuns.push_back(runs[i].maxRssBytes);
    if (!runs[i].succeeded() && failedRun == runs.size()) failedRun = i;
    if (support::readFile(outputs[i]) != referenceOut) row.stdoutMatches = false;
  }
  std::size_t pick;
  if (failedRun < runs.size()) {
    pick = failedRun;
  } else {
    std::vector<std::size_t> order(runs.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](std::size_t x, std::size_t y) { return runs[x].wallSeconds < runs[y].wallSeconds; });
    pick = order[(order.size() - 1) / 2];
  }
  const support::ProcessResult& m = runs[pick];
  row.wallSeconds = m.wallSeconds;
  row.cpuSeconds = m.cpuSeconds();
  row.maxRssBytes = m.maxRssBytes;
  row.exit = support::describeStatus(m);
  row.stdoutFile = fs::relative(outputs[pick], outDir, ec).string();
  if (failedRun < runs.size()) {
    row.status = LiveStatus::Failed;
    row.detail = "run " + std::to_string(failedRun + 1) + " ended with " + row.exit;
  } else if (!row.stdoutMatches) {
    row.status = LiveStatus::Failed;
    row.detail = "its output differs from " + reference + "'s (compare the files in " +
                 fs::path(outputs[pick]).parent_path().string() + ")";
  } else {
    row.status = LiveStatus::Ok;
  }
  return pick;
}

// The resident size over a run as OUTDIR/series/live-<allocator>.csv ("seconds,rss_bytes");
// sets the row's rssSeriesFile (relative to OUTDIR).
void writeRssSeries(LiveRow& row, const std::vector<support::RssSample>& samples,
                    const std::string& outDir) {
  const std::string relative = "series/live-" + support::fileSafe(row.allocator) + ".csv";
  std::string csv = "seconds,rss_bytes\n";
  char line[64];
  for (const support::RssSample& s : samples) {
    std::snprintf(line, sizeof line, "%.4f,%" PRIu64 "\n", s.seconds, s.rssBytes);
    csv += line;
  }
  support::writeFileAtomically((fs::path(outDir) / relative).string(), csv);
  row.rssSeriesFile = relative;
}

}  // namespace

void runLive(const Options& o, const std::vector<registry::ResolvedAllocator>& where, LiveReport& live,
             const std::function<void(const std::string&)>& step) {
  const fs::path dir = fs::path(o.outDir) / "live";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw support::Error("cannot create " + dir.string() + ": " + ec.message());

  const std::size_t n = where.size();
  live.rows.assign(n, {});
  std::vector<std::vector<support::ProcessResult>> results(n);
  std::vector<std::vector<std::string>> outputs(n);  // stdout file of each run
  std::vector<std::vector<std::vector<support::RssSample>>> rss(n);  // each run's samples
  std::size_t reference = n;
  for (std::size_t a = 0; a < n; ++a) {
    live.rows[a].allocator = where[a].spec.label;
    if (where[a].spec.text == "glibc") reference = a;
  }
  if (reference == n)
    for (std::size_t a = 0; a < n && reference == n; ++a)
      if (where[a].available) reference = a;
  if (reference < n) live.reference = where[reference].spec.label;

  for (unsigned round = 0; round < o.runs; ++round) {
    for (std::size_t a = 0; a < n; ++a) {
      if (!where[a].available) continue;
      const std::string& name = where[a].spec.label;
      step("live: " + name + " run " + std::to_string(round + 1) + "/" + std::to_string(o.runs));
      support::ChildSpec spec;
      spec.argv = o.command;
      spec.preload = where[a].preload;  // empty for glibc
      registry::addSettings(where[a].spec, spec.set);
      spec.stdoutPath = (dir / (support::fileSafe(name) + ".run" + std::to_string(round + 1) + ".stdout")).string();
      spec.ownPeakRss = true;  // the command's own peak RSS, not this process's size
      outputs[a].push_back(spec.stdoutPath);
      rss[a].emplace_back();
      spec.rssSamples = &rss[a].back();
      results[a].push_back(support::runChild(spec));
    }
  }

  const std::string referenceOut = reference < n && !outputs[reference].empty()
                                       ? support::readFile(outputs[reference].front()) : std::string();
  for (std::size_t a = 0; a < n; ++a) {
    LiveRow& row = live.rows[a];
    if (!where[a].available) {
      row.status = LiveStatus::Unavailable;
      row.detail = where[a].detail;
      continue;
    }
    const std::size_t shown =
        summarizeRuns(row, results[a], outputs[a], referenceOut, live.reference, o.outDir);
    if (!rss[a][shown].empty()) writeRssSeries(row, rss[a][shown], o.outDir);
  }
}

}  // namespace strata::compare
