// The Python the plot scripts run with, and running one: `strata compare` (plots.py), `strata
// tune` (tune_plot.py) and `strata drag` (drag_plot.py) draw their plots alike.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "support/helpers.hpp"

namespace strata::support {

// $STRATA_PYTHON when set, else /usr/bin/python3 (where Debian's python3-matplotlib is), else
// python3 in PATH: the first that imports matplotlib; nullopt when none does.
std::optional<std::string> findPython();

// How running a plot script went.
struct PlotRun {
  enum class Outcome { Drawn, NoPython, ScriptMissing, Failed };
  Outcome outcome = Outcome::NoPython;
  std::string python;  // the Python it ran with (Drawn, Failed)
  std::string script;  // the script's path
  std::string detail;  // ScriptMissing: why it cannot be read; Failed: how the script ended
  bool drawn() const { return outcome == Outcome::Drawn; }
  // The status a command reports for it: 0 drawn, 3 no Python with matplotlib, else 1.
  int exitStatus() const;
  // What went wrong, for a line to the user; empty when drawn:
  //   "needs python3-matplotlib (apt-get install python3-matplotlib)"
  //   "script PATH is missing (WHY)"
  //   "script failed (exit 1)"
  std::string problem() const;
};

// Runs the plot script `script` (a helper file) with findPython()'s Python and `args`.
// `starting` is called with the Python's path just before the script starts.
PlotRun runPlotScript(HelperId script, const std::vector<std::string>& args,
                      const std::function<void(const std::string& python)>& starting = {});

}  // namespace strata::support
