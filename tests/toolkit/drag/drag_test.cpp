// The drag tool (toolkit/drag/tool/) under Valgrind, run through the CLI's run helper
// (toolkit/drag/valgrind_run.hpp) on drag_program.c, whose requests and accesses give known
// records: each test checks the last-use file record for record. The helper's own errors are
// checked too. Valgrind is installed wherever the project's setup script ran; without it
// (no tool built) the runs are skipped.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "common/require.hpp"
#include "support/process.hpp"
#include "strata/protocol/drag.h"
#include "drag/valgrind_run.hpp"

namespace {

using strata::drag::DragRun;

struct Record {
  std::uint64_t id, lastUse, release;
  bool operator==(const Record&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Record& r) {
  return os << "(" << r.id << ", " << r.lastUse << ", "
            << (r.release == STRATA_DRAG_AT_EXIT ? std::string("at exit")
                                                  : std::to_string(r.release))
            << ")";
}

constexpr std::uint64_t kAtExit = STRATA_DRAG_AT_EXIT;

// A last-use file read back: its header's pid, records, and trailer if any.
struct LastUseFile {
  bool valid = false;  // the header is there and right, and the size is whole words
  std::uint64_t pid = 0;
  std::vector<Record> records;
  bool hasTrailer = false;
  std::uint64_t trailerCount = 0;
};

LastUseFile readLastUse(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LastUseFile f;
  if (bytes.size() < 24 || bytes.size() % 24 != 0 || bytes.compare(0, 8, STRATA_DRAG_MAGIC) != 0)
    return f;
  std::vector<std::uint64_t> words(bytes.size() / 8);
  std::memcpy(words.data(), bytes.data(), bytes.size());
  if (words[1] != STRATA_DRAG_VERSION) return f;
  f.valid = true;
  f.pid = words[2];
  for (std::size_t i = 3; i + 2 < words.size(); i += 3) {
    if (words[i] == STRATA_DRAG_END) {
      f.hasTrailer = i + 3 == words.size() && words[i + 2] == 0;
      f.trailerCount = words[i + 1];
      break;
    }
    f.records.push_back({words[i], words[i + 1], words[i + 2]});
  }
  return f;
}

// Runs drag_program MODE under the tool into a fresh file; the file's path is `out`.
class DragTool : public ::testing::Test {
 protected:
  void SetUp() override {
#ifndef STRATA_DRAG_TOOL_PATH
    STRATA_SKIP_OR_FAIL("Valgrind's tool files were not found when this tree was configured "
                        "(Debian package: valgrind; amd64 only), so the drag tool was not built");
#else
    std::string why;
    auto run = DragRun::prepare(STRATA_DRAG_TOOL_PATH, why);
    if (!run && why.rfind("valgrind is not installed", 0) == 0) STRATA_SKIP_OR_FAIL(why);
    ASSERT_TRUE(run) << why;
    run_.emplace(std::move(*run));
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    out_ = ::testing::TempDir() + "drag_" + info->name() + "_" + std::to_string(::getpid()) +
           ".lastuse";
    err_ = out_ + ".stderr";
#endif
  }
  void TearDown() override {
    if (out_.empty()) return;
    ::unlink(out_.c_str());
    ::unlink(err_.c_str());
  }

  strata::support::ProcessResult run(const std::string& mode) {
    strata::support::ChildSpec spec;
#ifdef STRATA_DRAG_PROGRAM
    spec.argv = run_->argv(out_, {STRATA_DRAG_PROGRAM, mode});
#endif
    spec.set = run_->environment();
    spec.stderrPath = err_;
    return strata::support::runChild(spec);
  }
  std::string stderrText() const {
    std::ifstream in(err_);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  LastUseFile lastUse() const { return readLastUse(out_); }

  std::optional<DragRun> run_;
  std::string out_, err_;
};

TEST_F(DragTool, AnswersHello) {
  const auto r = run("hello");
  EXPECT_TRUE(r.succeeded()) << strata::support::describeStatus(r) << "\n" << stderrText();
  const LastUseFile f = lastUse();
  ASSERT_TRUE(f.valid);
  EXPECT_TRUE(f.records.empty());
  EXPECT_TRUE(f.hasTrailer);
  EXPECT_EQ(f.trailerCount, 0u);
}

TEST_F(DragTool, RecordsLastUseBetweenRequests) {
  const auto r = run("pattern");
  ASSERT_TRUE(r.succeeded()) << strata::support::describeStatus(r) << "\n" << stderrText();
  const LastUseFile f = lastUse();
  ASSERT_TRUE(f.valid);
  EXPECT_NE(f.pid, 0u);
  const std::vector<Record> want{{0, 2, 4}, {2, 4, 6}, {1, 6, 7}, {3, 3, kAtExit}};
  EXPECT_EQ(f.records, want);
  EXPECT_TRUE(f.hasTrailer);
  EXPECT_EQ(f.trailerCount, want.size());
}

TEST_F(DragTool, AccessStraddlingTwoObjectsUsesBoth) {
  const auto r = run("straddle");
  ASSERT_TRUE(r.succeeded()) << strata::support::describeStatus(r) << "\n" << stderrText();
  const std::vector<Record> want{{10, 3, 4}, {11, 3, 5}, {12, 2, 6}, {13, 3, 7}};
  const LastUseFile f = lastUse();
  EXPECT_EQ(f.records, want);
  EXPECT_TRUE(f.hasTrailer);
}

TEST_F(DragTool, SystemCallAccessIsAUse) {
  const auto r = run("syscall");
  ASSERT_TRUE(r.succeeded()) << strata::support::describeStatus(r) << "\n" << stderrText();
  const std::vector<Record> want{{0, 1, 2}, {1, 1, 3}};
  EXPECT_EQ(lastUse().records, want);
}

TEST_F(DragTool, ReusedBytesBelongToTheNewObject) {
  const auto r = run("reuse");
  ASSERT_TRUE(r.succeeded()) << strata::support::describeStatus(r) << "\n" << stderrText();
  const std::vector<Record> want{{0, 0, 1}, {1, 3, 4}, {2, 3, 5}, {3, 6, 7}, {4, 7, kAtExit}};
  EXPECT_EQ(lastUse().records, want);
}

TEST_F(DragTool, CrashStillWritesLiveObjectsAndTrailer) {
  const auto r = run("crash");
  EXPECT_EQ(r.signal, SIGSEGV) << strata::support::describeStatus(r) << "\n" << stderrText();
  const LastUseFile f = lastUse();
  ASSERT_TRUE(f.valid);
  const std::vector<Record> want{{1, 1, 2}, {0, 1, kAtExit}};
  EXPECT_EQ(f.records, want);
  EXPECT_TRUE(f.hasTrailer);
  EXPECT_EQ(f.trailerCount, 2u);
}

TEST_F(DragTool, ForkChildWritesNothing) {
  const auto r = run("fork");
  ASSERT_TRUE(r.succeeded()) << strata::support::describeStatus(r) << "\n" << stderrText();
  const LastUseFile f = lastUse();
  ASSERT_TRUE(f.valid);
  const std::vector<Record> want{{1, 1, 2}, {0, 0, kAtExit}};
  EXPECT_EQ(f.records, want);
  EXPECT_TRUE(f.hasTrailer);
  EXPECT_EQ(f.trailerCount, 2u);
}

TEST_F(DragTool, NeedsDragOut) {
  strata::support::ChildSpec spec;
  spec.argv = {run_->valgrind().program, "--tool=strata-drag", "-q", "/bin/true"};
  spec.set = run_->environment();
  spec.stderrPath = err_;
  const auto r = strata::support::runChild(spec);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(stderrText().find("--drag-out=FILE"), std::string::npos) << stderrText();
}

#ifdef STRATA_DRAG_PROGRAM
TEST(DragProgram, HelloIsZeroWithoutTheTool) {
  strata::support::ChildSpec spec;
  spec.argv = {STRATA_DRAG_PROGRAM, "hello"};
  EXPECT_EQ(strata::support::runChild(spec).exitCode, 4);
}
#endif

TEST(DragRunHelper, MissingToolIsReported) {
  std::string why;
  const auto run = DragRun::prepare("/nonexistent/strata-drag-amd64-linux", why);
  EXPECT_FALSE(run);
  if (why.rfind("valgrind is not installed", 0) == 0) STRATA_SKIP_OR_FAIL(why);
  EXPECT_EQ(why.rfind("the drag tool was not built (", 0), 0u) << why;
}

#ifdef STRATA_DRAG_TOOL_PATH
TEST(DragRunHelper, LibDirHoldsValgrindsFilesAndOursAndGoes) {
  std::string why;
  auto run = DragRun::prepare(STRATA_DRAG_TOOL_PATH, why);
  if (!run && why.rfind("valgrind is not installed", 0) == 0) STRATA_SKIP_OR_FAIL(why);
  ASSERT_TRUE(run) << why;
  const std::string dir = run->libDir();
  EXPECT_EQ(::access((dir + "/memcheck-amd64-linux").c_str(), X_OK), 0);
  EXPECT_EQ(::access((dir + "/" + strata::drag::kToolFile).c_str(), X_OK), 0);
  EXPECT_EQ(run->environment(), std::vector<std::string>{"VALGRIND_LIB=" + dir});
  const auto argv = run->argv("a%p.out", {"prog", "x"});
  const std::vector<std::string> want{run->valgrind().program, "--tool=strata-drag",
                                      "--drag-out=a%%p.out", "-q", "--", "prog", "x"};
  EXPECT_EQ(argv, want);
  const std::vector<std::string> every{run->valgrind().program, "--tool=strata-drag",
                                       "--drag-out=d%%/last-use.%p.bin", "-q",
                                       "--trace-children=yes", "--log-file=d%%/valgrind.%p.log",
                                       "--", "prog"};
  EXPECT_EQ(run->argvEveryProcess("d%", {"prog"}), every);
  EXPECT_EQ(DragRun::lastUseFile("d", 42), "d/last-use.42.bin");
  DragRun moved = std::move(*run);
  run.reset();
  EXPECT_EQ(::access(dir.c_str(), F_OK), 0);
  { DragRun gone = std::move(moved); }
  EXPECT_NE(::access(dir.c_str(), F_OK), 0);
}
#endif

}  // namespace
