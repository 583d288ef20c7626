// Drawing `strata compare`'s plots with plots.py (compare_steps.hpp).
#include <cstdlib>
#include <optional>
#include <string_view>

#include "compare/compare_steps.hpp"
#include "support/helpers.hpp"
#include "support/python.hpp"
#include "support/proc.hpp"
#include "support/process.hpp"

namespace strata::compare {
namespace {

constexpr std::string_view kPlotKinds[] = {"heap", "sizes", "lifetimes", "summary"};

}  // namespace

int drawPlots(const Options& o, const std::vector<TraceReport>& traces, bool live, std::FILE* info) {
  const fs::path out = o.outDir;
  const std::optional<std::string> python = support::findPython();
  // plots.py: $STRATA_PLOTS_SCRIPT, else <exe dir>/../share/strata/plots.py.
  const std::string script = support::helperPath(support::HelperId::ComparePlots);
  if (!python) {
    std::fprintf(stderr, "strata compare: plots need python3-matplotlib (apt-get install "
                 "python3-matplotlib); the table is in %s\n", (out / "report.txt").c_str());
    return 3;
  }
  if (const std::string why = unreadable(script); !why.empty()) {
    std::fprintf(stderr, "strata compare: the plot script %s is missing (%s); the table is in "
                 "%s\n", script.c_str(), why.c_str(), (out / "report.txt").c_str());
    return 1;
  }
  std::fprintf(stderr, "strata compare: drawing the plots with %s\n", python->c_str());
  support::ChildSpec spec;
  spec.argv = {*python, script, o.outDir};
  const support::ProcessResult r = support::runChild(spec);
  if (!r.succeeded()) {
    std::fprintf(stderr, "strata compare: the plot script failed (%s); the table is in %s\n",
                 support::describeStatus(r).c_str(), (out / "report.txt").c_str());
    return 1;
  }
  std::fprintf(info, "\nplots (.png and .svg) in %s/:\n", o.outDir.c_str());
  for (const TraceReport& t : traces) {
    std::string names;
    for (const std::string_view kind : kPlotKinds)
      names += (names.empty() ? "" : ", ") + t.name + "-" + std::string(kind);
    std::fprintf(info, "  %s\n", names.c_str());
  }
  if (live) std::fprintf(info, "  command-summary\n");
  return 0;
}

}  // namespace strata::compare
