// Running a command under Valgrind with Strata's drag tool (strata-drag-amd64-linux, built
// from tool/), for `strata drag` and the tool's tests: finding Valgrind and its tool
// directory, a temporary directory Valgrind takes its tools from (VALGRIND_LIB: every file of
// Valgrind's own tool directory plus ours), and the command line and environment. Spawning
// and waiting are the caller's (support::runChild).
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "strata/protocol/drag.h"

namespace strata::drag {

// The tool's name for --tool= (strata/protocol/drag.h), and its file name, which Valgrind
// derives from the name and the platform.
inline constexpr const char* kToolName = STRATA_DRAG_TOOL_NAME;
inline constexpr const char* kToolFile = STRATA_DRAG_TOOL_NAME "-amd64-linux";

// An installed Valgrind.
struct Valgrind {
  std::string program;  // the `valgrind` launcher found in PATH
  std::string toolDir;  // the directory holding its tools (memcheck-amd64-linux) and files
};

// The `valgrind` in PATH and its tool directory: $VALGRIND_LIB when set, else beside the
// launcher's prefix (PREFIX/libexec/valgrind, PREFIX/lib/valgrind), else Debian's and other
// distributions' places. Empty, with `why` set, when either is missing.
std::optional<Valgrind> findValgrind(std::string& why);

// A prepared run: Valgrind found, the tool checked and a temporary VALGRIND_LIB directory
// made, which is removed when this object goes (keep it until Valgrind has exited).
class DragRun {
 public:
  // `toolPath` is where the built tool is expected (the library directory's kToolFile).
  // Errors: "valgrind is not installed (Debian package: valgrind)", "the drag tool was not
  // built (...)", or why the directory could not be made.
  static std::optional<DragRun> prepare(const std::string& toolPath, std::string& why);

  DragRun(DragRun&& other) noexcept;
  DragRun& operator=(DragRun&& other) noexcept;
  DragRun(const DragRun&) = delete;
  DragRun& operator=(const DragRun&) = delete;
  ~DragRun();

  // valgrind --tool=strata-drag --drag-out=OUT -q [valgrindOptions] -- COMMAND...
  // (-q: Valgrind's banner and summary would mix with the program's stderr). OUT is taken
  // as it is: a '%' in it is not one of Valgrind's file-name patterns.
  std::vector<std::string> argv(const std::string& outFile,
                                const std::vector<std::string>& command,
                                const std::vector<std::string>& valgrindOptions = {}) const;
  // The same for a command whose programs all run under the tool: every program it execs
  // too (--trace-children=yes), each process writing DIR/last-use.<pid>.bin (lastUseFile)
  // and Valgrind's messages to DIR/valgrind.<pid>.log, as the recorder writes a trace per
  // process. A process keeps its pid across exec: the program it execs replaces its
  // last-use file, as the recorder replaces its trace.
  std::vector<std::string> argvEveryProcess(const std::string& dir,
                                            const std::vector<std::string>& command,
                                            const std::vector<std::string>& valgrindOptions = {})
      const;
  static std::string lastUseFile(const std::string& dir, long pid);
  // The NAME=VALUE entries to add to the command's environment (VALGRIND_LIB).
  std::vector<std::string> environment() const;

  const Valgrind& valgrind() const { return valgrind_; }
  const std::string& libDir() const { return libDir_; }

 private:
  DragRun(Valgrind valgrind, std::string libDir) : valgrind_(std::move(valgrind)),
                                                   libDir_(std::move(libDir)) {}
  void removeLibDir() noexcept;

  Valgrind valgrind_;
  std::string libDir_;  // the temporary VALGRIND_LIB; empty once moved from
};

}  // namespace strata::drag
