// `strata drag`'s output (drag.cpp runs the program and the analysis): the report, printed and
// kept in DIR/report.txt; the same figures as DIR/drag.json (drag_json.hpp); the curves in
// DIR/curves.csv; their plot DIR/drag.png and .svg (drag_plot.py).
#pragma once
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "support/python.hpp"

#include "drag/drag_analysis.hpp"
#include "drag/drag_ideal_trace.hpp"
#include "drag/drag_last_use.hpp"

namespace strata::drag {

// How the run went, for the report.
struct DragRunFacts {
  std::string command;  // as a shell line
  std::string status;   // "exit 0", "signal 11 (SIGSEGV)", ...
  double seconds = 0;   // wall time under Valgrind
  bool succeeded = false;
  std::filesystem::path dir;
  std::size_t top = 10;
  std::vector<std::string> notes;  // said before the figures
};

// One process of the run: its trace, and its analysis when it ran under the tool.
struct DragProcess {
  std::filesystem::path trace;
  long pid = 0;
  std::string program;
  bool analysed = false;
  LastUseData lastUse;
  DragResult result;
};

// What writing the report came to: its text (also in DIR/report.txt) and the plot.
struct DragReport {
  std::string text;
  support::PlotRun plot;
};

// Writes the report into DIR/report.txt: a line per analysed process when there are several,
// then `shown`'s figures in full (it is one of `processes`); DIR/drag.json, DIR/curves.csv and
// the plot of `shown`. Throws support::Error "PATH: cannot write: REASON" when a file cannot
// be written (a missing plotter is told in the plot's outcome, not a failure).
DragReport writeDragReport(const DragRunFacts& facts, const std::vector<DragProcess>& processes,
                           const DragProcess& shown, const IdealTraceCounts& ideal);

}  // namespace strata::drag
