// The helper table and where each helper is (see helpers.hpp).
#include "support/helpers.hpp"

#include <unistd.h>

#include <array>
#include <cstdlib>
#include <filesystem>

#include "support/proc.hpp"

namespace strata::support {
namespace {

namespace fs = std::filesystem;

constexpr std::array<Helper, 9> kHelpers{{
    {HelperId::Probe, "strata-probe", HelperDir::Programs, "STRATA_PROBE", "strata_probe",
     "checks each allocator library before it is used (compare, replay, run, tune)", false},
    {HelperId::Replayer, "strata-replayer", HelperDir::Programs, "STRATA_REPLAYER",
     "strata_replayer", "replays a trace on an allocator (compare, replay, tune)", false},
    {HelperId::Exec, "strata-exec", HelperDir::Programs, "STRATA_EXEC", "strata_exec",
     "starts live runs and measures their peak RSS (compare, run, tune)", false},
    {HelperId::Recorder, "libstrata-record.so", HelperDir::Libraries, "", "strata_record",
     "records a program's allocations (record, compare -- COMMAND, drag)", false},
    {HelperId::DragTool, "strata-drag-amd64-linux", HelperDir::Libraries, "", "strata_drag_tool",
     "the Valgrind tool of strata drag (built where Debian's valgrind is installed)", true},
    {HelperId::ComparePlots, "plots.py", HelperDir::Data, "STRATA_PLOTS_SCRIPT",
     "strata_share_files", "compare's plots", false},
    {HelperId::TunePlot, "tune_plot.py", HelperDir::Data, "", "strata_share_files",
     "tune's Pareto front plot", false},
    {HelperId::DragPlot, "drag_plot.py", HelperDir::Data, "", "strata_share_files",
     "drag's plot", false},
    {HelperId::TuneSpaces, "tune-spaces.conf", HelperDir::Data, "STRATA_TUNE_SPACES",
     "strata_share_files", "tune's search spaces", false},
}};

// True when dir holds one of the libraries Strata installs there.
bool holdsStrataLibraries(const fs::path& dir) {
  for (const char* file : {"libstrata-record.so", "libstrata.so"})
    if (::access((dir / file).c_str(), R_OK) == 0) return true;
  return false;
}

std::string directoryOf(HelperDir dir) {
  switch (dir) {
    case HelperDir::Programs: return selfDirectory();
    case HelperDir::Libraries: return strataLibDir();
    case HelperDir::Data: return strataDataDir();
  }
  return {};
}

}  // namespace

std::span<const Helper> helpers() { return kHelpers; }

const Helper& helper(HelperId id) {
  for (const Helper& h : kHelpers)
    if (h.id == id) return h;
  std::abort();  // every HelperId has a row
}

std::string helperPath(HelperId id) {
  const Helper& h = helper(id);
  if (!h.environment.empty()) {
    const char* env = std::getenv(std::string(h.environment).c_str());
    if (env != nullptr && env[0] != '\0') return env;
  }
  const std::string dir = directoryOf(h.dir);
  if (dir.empty()) return {};
  return (fs::path(dir) / std::string(h.file)).lexically_normal().string();
}

bool helperPresent(HelperId id) {
  const std::string path = helperPath(id);
  const int mode = helper(id).dir == HelperDir::Programs ? X_OK : R_OK;
  return !path.empty() && ::access(path.c_str(), mode) == 0;
}

std::string helperMissing(HelperId id) {
  const Helper& h = helper(id);
  const std::string_view variable =
      !h.environment.empty() ? h.environment
      : h.dir == HelperDir::Libraries ? std::string_view("STRATA_LIB_DIR") : std::string_view();
  std::string s = helperPath(id) + " is missing (build the CMake target strata_toolkit";
  if (!variable.empty()) s.append(", or set ").append(variable);
  return s + ")";
}

std::string strataLibDir() {
  const char* env = std::getenv("STRATA_LIB_DIR");
  if (env != nullptr && env[0] != '\0') return env;
  const fs::path exe = selfDirectory();
  if (exe.empty()) return {};
  const fs::path lib = (exe.parent_path() / "lib").lexically_normal();
  // Installed under a prefix whose library directory is not lib (lib64, lib/<triplet>).
  const fs::path installed = (exe.parent_path() / STRATA_INSTALL_LIBDIR).lexically_normal();
  if (!holdsStrataLibraries(lib) && holdsStrataLibraries(installed)) return installed.string();
  return lib.string();
}

std::string strataDataDir() {
  const fs::path exe = selfDirectory();
  if (exe.empty()) return {};
  return (exe.parent_path() / "share" / "strata").lexically_normal().string();
}

}  // namespace strata::support
