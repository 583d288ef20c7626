// The files the `strata` command starts or loads besides itself: helper programs beside it,
// the recorder and the Valgrind tool in Strata's library directory, data files in
// share/strata. Every lookup of one goes through this table, so that `strata doctor` checks
// each, and each names the CMake target that builds it. Every such target is a part of the
// target strata_toolkit, which the main job builds (a test compares the two lists). Strata's
// malloc libraries are the allocator registry's (toolkit/registry), which names their targets.
#pragma once
#include <span>
#include <string>
#include <string_view>

namespace strata::support {

enum class HelperId {
  Probe,         // strata-probe: checks an allocator library before anything runs on it
  Replayer,      // strata-replayer: replays a trace in a child process
  Exec,          // strata-exec: starts live runs, so their peak RSS is their own
  Recorder,      // libstrata-record.so: preloaded by `strata record`
  DragTool,      // the Valgrind tool of `strata drag`
  ComparePlots,  // plots.py
  TunePlot,      // tune_plot.py
  DragPlot,      // drag_plot.py
  TuneSpaces,    // tune-spaces.conf
};

// Where a helper lives: beside the `strata` executable, in Strata's library directory, or in
// <exe dir>/../share/strata (the same places in the build tree and in an install).
enum class HelperDir { Programs, Libraries, Data };

struct Helper {
  HelperId id;
  std::string_view file;         // its file name
  HelperDir dir;
  std::string_view environment;  // a variable that names the file itself when set, or empty
  std::string_view cmakeTarget;  // the CMake target that builds or copies it
  std::string_view purpose;      // what needs it, for `strata doctor`
  bool optional;                 // built only where a build dependency is (Valgrind's SDK)
};

// Every helper, in the order `strata doctor` lists them.
std::span<const Helper> helpers();
const Helper& helper(HelperId id);

// Where the helper is: $environment when set, else its file in its directory. Not checked.
std::string helperPath(HelperId id);

// Whether the helper is at helperPath: executable for a program, readable otherwise.
bool helperPresent(HelperId id);

// What to say when it is not: "PATH is missing (build the CMake target strata_toolkit, or set
// VAR)", VAR being the variable that would point elsewhere.
std::string helperMissing(HelperId id);

// Strata's library directory: $STRATA_LIB_DIR when set; else <exe dir>/../lib, or the install's
// library directory relative to the executable (<exe dir>/../LIBDIR, e.g. lib/x86_64-linux-gnu)
// when that one holds Strata's libraries and ../lib does not.
std::string strataLibDir();

// <exe dir>/../share/strata.
std::string strataDataDir();

}  // namespace strata::support
