// The live check of `strata tune` (tune_live.hpp).
#include "tune/tune_live.hpp"

#include "support/process.hpp"

namespace strata::tune {
namespace {

// One setting's live runs.
struct LiveRuns {
  bool ok = true;
  std::string detail;
  std::vector<double> seconds;
  std::vector<double> rss;
};

void runOnce(const std::vector<std::string>& command, const registry::ResolvedAllocator& a,
             const std::vector<std::string>& environment, LiveRuns& runs) {
  support::ChildSpec spec;
  spec.argv = command;
  spec.preload = a.preload;
  spec.set = environment;
  spec.stdoutPath = "/dev/null";
  spec.stderrPath = "/dev/null";
  spec.ownPeakRss = true;
  const support::ProcessResult r = support::runChild(spec);
  if (!r.succeeded()) {
    runs.ok = false;
    runs.detail = "the command ended with " + support::describeStatus(r);
    return;
  }
  runs.seconds.push_back(r.wallSeconds);
  runs.rss.push_back(static_cast<double>(r.maxRssBytes));
}

}  // namespace

LiveCheck checkLive(const std::string& name, const std::vector<std::string>& command,
                    const registry::ResolvedAllocator& allocator, const Candidate& best,
                    unsigned rounds, const std::function<void(const std::string&)>& note) {
  LiveRuns def, win;
  for (unsigned r = 0; r < rounds && def.ok && win.ok; ++r) {
    note("strata tune: running " + support::shellLine(command) + " live on " + name + " (round " +
         std::to_string(r + 1) + "/" + std::to_string(rounds) + ")");
    runOnce(command, allocator, {}, def);
    runOnce(command, allocator, best.environment, win);
  }
  LiveCheck l;
  l.allocator = name;
  l.ok = def.ok && win.ok;
  l.detail = !def.ok ? "default: " + def.detail : (!win.ok ? "best setting: " + win.detail : "");
  l.defaultSeconds = median(def.seconds);
  l.bestSeconds = median(win.seconds);
  l.defaultRss = static_cast<std::uint64_t>(median(def.rss));
  l.bestRss = static_cast<std::uint64_t>(median(win.rss));
  return l;
}

}  // namespace strata::tune
