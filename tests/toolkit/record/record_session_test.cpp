// The record component's session library (toolkit/record/record_session.hpp): the
// environment that drives the recorder, the names of the traces a run writes, running a
// command under the recorder (the recorder from this build, through STRATA_LIB_DIR) and the
// errors and statuses `strata record` passes on.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/error.hpp"
#include "record/record_session.hpp"
#include "strata/protocol/recorder_environment.hpp"
#include "strata/trace/names.hpp"

namespace {

namespace fs = std::filesystem;
using namespace strata::record;
using strata::trace::childTraces;
using strata::trace::pidSuffix;
namespace env = strata::protocol::env;

// A fresh directory, removed at the end.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "strata-record-session-XXXXXX").string();
    path = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// STRATA_LIB_DIR set to `dir` for the test's life.
struct LibDir {
  explicit LibDir(const std::string& dir) { ::setenv("STRATA_LIB_DIR", dir.c_str(), 1); }
  ~LibDir() { ::unsetenv("STRATA_LIB_DIR"); }
};

TEST(RecordSession, EnvironmentNamesOnlyWhatIsAsked) {
  EXPECT_EQ(recorderEnvironment("/t/a.trace", {}),
            std::vector<std::string>{"STRATA_TRACE_FILE=/t/a.trace"});
  RecordSettings all;
  all.clock = env::kClockCoarse;
  all.touchMin = env::kTouchOff;
  all.touchAll = all.sites = all.drag = true;
  EXPECT_EQ(recorderEnvironment("f", all),
            (std::vector<std::string>{"STRATA_TRACE_FILE=f", "STRATA_TRACE_CLOCK=coarse",
                                      "STRATA_TRACE_SITES=1", "STRATA_TRACE_TOUCH_MIN=off",
                                      "STRATA_TRACE_TOUCH_ALL=1", "STRATA_TRACE_DRAG=1"}));
  EXPECT_TRUE(env::settingOn("1"));
  EXPECT_TRUE(env::settingOn("yes"));
  EXPECT_FALSE(env::settingOn("0"));
  EXPECT_FALSE(env::settingOn(""));
  EXPECT_FALSE(env::settingOn(nullptr));
}

TEST(RecordSession, ChildTracesAreTheDigitSuffixesInPidOrder) {
  TempDir dir;
  const std::string file = (dir.path / "app.trace").string();
  for (const char* name : {"app.trace", "app.trace.12", "app.trace.3", "app.trace.x",
                           "app.trace.", "other.trace.5"})
    std::ofstream(dir.path / name) << "x";
  EXPECT_EQ(childTraces(file), (std::vector<std::string>{file + ".3", file + ".12"}));
  EXPECT_EQ(pidSuffix(file + ".12"), 12);
  EXPECT_EQ(pidSuffix(file), 0);
  EXPECT_EQ(absolutePath("/a/b"), "/a/b");
  EXPECT_EQ(absolutePath("b"), (fs::current_path() / "b").string());
}

TEST(RecordSession, AMissingRecorderIsExitStatusTwo) {
  TempDir empty;
  LibDir lib(empty.path.string());
  try {
    recorderLibrary();
    FAIL() << "no recorder in an empty directory";
  } catch (const strata::support::Error& e) {
    EXPECT_EQ(e.exitStatus(), 2);
    const std::string missing = (empty.path / "libstrata-record.so").string();
    EXPECT_EQ(std::string(e.what()).rfind("the recorder " + missing + " is missing", 0), 0u)
        << e.what();
  }
}

#ifdef STRATA_RECORDER_DIR
TEST(RecordSession, RecordsTheCommandAndPassesItsStatusOn) {
  LibDir lib(STRATA_RECORDER_DIR);
  TempDir dir;
  RecordRequest request;
  request.file = (dir.path / "sh.trace").string();
  request.command = {"sh", "-c", "exit 3"};
  const RecordResult r = recordCommand(request);
  EXPECT_EQ(r.process.shellStatus(), 3);
  // The command's own process writes FILE (the owner pid is its pid), not FILE.<pid>.
  ASSERT_TRUE(r.fileWritten());
  const TraceSummary s = summariseTrace(r.file);
  EXPECT_EQ(s.error, "");
  EXPECT_TRUE(s.complete);
  EXPECT_GT(s.events, 0u);

  request.command = {"sh", "-c", "kill -TERM $$"};
  EXPECT_EQ(recordCommand(request).process.shellStatus(), 128 + 15);

  request.command = {"strata-no-such-command-x"};
  try {
    recordCommand(request);
    FAIL() << "a command that is not found";
  } catch (const strata::support::Error& e) {
    EXPECT_EQ(e.exitStatus(), 127);
    EXPECT_EQ(std::string(e.what()), "strata-no-such-command-x: command not found");
  }
  request.file = (dir.path / "no-such-dir" / "t.trace").string();
  request.command = {"true"};
  try {
    recordCommand(request);
    FAIL() << "a FILE that cannot be written";
  } catch (const strata::support::Error& e) {
    EXPECT_EQ(e.exitStatus(), 1);
    EXPECT_EQ(std::string(e.what()).rfind("cannot write ", 0), 0u) << e.what();
  }
  EXPECT_EQ(summariseTrace(request.file).error.rfind("cannot read ", 0), 0u);
}
#endif

}  // namespace
