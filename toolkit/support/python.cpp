// Finding Python and running the plot scripts (python.hpp).
#include "support/python.hpp"

#include <cstdlib>

#include "support/files.hpp"
#include "support/process.hpp"

namespace strata::support {

std::optional<std::string> findPython() {
  std::vector<std::string> candidates;
  const char* env = std::getenv("STRATA_PYTHON");
  if (env != nullptr && env[0] != '\0') candidates.emplace_back(env);
  else candidates = {"/usr/bin/python3", "python3"};
  for (const std::string& c : candidates) {
    ChildSpec spec;
    spec.argv = {c, "-c", "import matplotlib"};
    spec.quiet = true;
    if (runChild(spec).succeeded()) return c;
  }
  return std::nullopt;
}

int PlotRun::exitStatus() const {
  switch (outcome) {
    case Outcome::Drawn: return 0;
    case Outcome::NoPython: return 3;
    case Outcome::ScriptMissing:
    case Outcome::Failed: break;
  }
  return 1;
}

std::string PlotRun::problem() const {
  switch (outcome) {
    case Outcome::Drawn: break;
    case Outcome::NoPython: return "needs python3-matplotlib (apt-get install python3-matplotlib)";
    case Outcome::ScriptMissing: return "script " + script + " is missing (" + detail + ")";
    case Outcome::Failed: return "script failed (" + detail + ")";
  }
  return {};
}

PlotRun runPlotScript(HelperId script, const std::vector<std::string>& args,
                      const std::function<void(const std::string& python)>& starting) {
  PlotRun run;
  run.script = helperPath(script);
  const std::optional<std::string> python = findPython();
  if (!python) return run;
  run.python = *python;
  if (const std::string why = unreadable(run.script); !why.empty()) {
    run.outcome = PlotRun::Outcome::ScriptMissing;
    run.detail = why;
    return run;
  }
  if (starting) starting(run.python);
  ChildSpec spec;
  spec.argv = {run.python, run.script};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  const ProcessResult r = runChild(spec);
  run.outcome = r.succeeded() ? PlotRun::Outcome::Drawn : PlotRun::Outcome::Failed;
  if (!r.succeeded()) run.detail = describeStatus(r);
  return run;
}

}  // namespace strata::support
