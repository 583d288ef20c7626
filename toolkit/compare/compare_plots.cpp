// Drawing `strata compare`'s plots with plots.py (compare_steps.hpp).
#include <string_view>

#include "compare/compare_steps.hpp"

namespace strata::compare {
namespace {

constexpr std::string_view kPlotKinds[] = {"heap", "sizes", "lifetimes", "summary"};

}  // namespace

support::PlotRun drawPlots(const Options& o, const std::function<void(const std::string&)>& starting) {
  // plots.py: $STRATA_PLOTS_SCRIPT, else <exe dir>/../share/strata/plots.py.
  return support::runPlotScript(support::HelperId::ComparePlots, {o.outDir}, starting);
}

std::vector<std::string> plotNames(const std::vector<TraceReport>& traces, bool live) {
  std::vector<std::string> lines;
  for (const TraceReport& t : traces) {
    std::string names;
    for (const std::string_view kind : kPlotKinds)
      names += (names.empty() ? "" : ", ") + t.name + "-" + std::string(kind);
    lines.push_back(names);
  }
  if (live) lines.push_back("command-summary");
  return lines;
}

}  // namespace strata::compare
