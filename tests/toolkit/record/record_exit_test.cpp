// `strata record` on the ways a program ends (record_crash_program, see crash_program.cpp):
// crashes and kills leave a valid trace without its trailer, exits finish it, the program's
// exit status is passed on, exec starts the trace again for the new program; and the clocks
// the time stamps come from.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "record_run.hpp"

namespace {

#ifdef STRATA_RECORD_PRELOAD_TESTS

using strata::test::TempDir;
using strata::trace::Event;
using strata::trace::Op;
using namespace strata::test::record;

// `record_crash_program MODE`, as shell words.
std::string crash(const std::string& mode) { return quote(RECORD_CRASH) + " " + mode; }

// One way of ending, and what `strata record` and the trace must show for it. Besides what a
// case names, every trace reads to its end and its program chunk names record_crash_program
// (after exec too, not the shell) with a process id.
struct ExitCase {
  std::string name;
  std::string args;      // after `strata record`
  std::string trace;     // the trace written, in the test's directory
  int status;            // `strata record`'s: the program's, 128+N for signal N
  bool complete;         // the trace has its trailer (the program exited) or not (killed)
  std::string err = {};  // in stderr, when not empty
  // The trace's events: the last is malloc(lastMalloc); some event is malloc(someMalloc); the
  // 100000 mallocs of 1 + i % 1000 are there in order, then an event of size afterMany; there
  // are more than moreEventsThan; the last is over spanNs later than the first (0: unchecked).
  std::uint64_t lastMalloc = 0, someMalloc = 0, afterMany = 0;
  std::size_t moreEventsThan = 0;
  std::uint64_t spanNs = 0;
};

const ExitCase kExitCases[] = {
    // abort() leaves every event; 100000 mallocs take well over a microsecond, and the
    // default clock shows it.
    {.name = "AbortLeavesEveryEventAndStatus134",
     .args = "-o ab.trace -- " + crash("abort"), .trace = "ab.trace", .status = 134,
     .complete = false, .err = "incomplete", .afterMany = 4242, .moreEventsThan = 100000,
     .spanNs = 1000},
    {.name = "SegfaultLeavesTheTraceAndStatus139",
     .args = "-o sg.trace -- " + crash("segv"), .trace = "sg.trace", .status = 139,
     .complete = false, .lastMalloc = 4343},
    {.name = "UnderscoreExitFinishesTheTraceAndPassesTheStatus",
     .args = "-o ex.trace -- " + crash("_exit"), .trace = "ex.trace", .status = 5,
     .complete = true, .lastMalloc = 4444},
    {.name = "QuickExitFinishesTheTraceAndPassesTheStatus",
     .args = "-o qe.trace -- " + crash("quick"), .trace = "qe.trace", .status = 6,
     .complete = true, .lastMalloc = 4646},
    // No -o: the trace is named for the program.
    {.name = "ExitStatusIsPassedOnAndTheDefaultNameUsed",
     .args = "-- " + crash("exit3"), .trace = "record_crash_program.trace", .status = 3,
     .complete = true, .someMalloc = 4545},
    // Whole chunks were written as they filled: 100000 events of 4-5 bytes fill several.
    {.name = "SigkillLeavesAValidPrefix",
     .args = "-o kl.trace -- " + crash("kill"), .trace = "kl.trace", .status = 137,
     .complete = false, .moreEventsThan = 30000},
    // Killed by SIGPIPE (the reader of its pipe went away: `prog | head`).
    {.name = "SigpipeLeavesTheTraceAndStatus141",
     .args = "-o pp.trace -- " + crash("pipe"), .trace = "pp.trace", .status = 128 + SIGPIPE,
     .complete = false, .lastMalloc = 4747},
    // sh.trace is the exec'd program's, and its program chunk names it.
    {.name = "ExecRestartsTheTraceForTheNewProgram",
     .args = "-o sh.trace -- /bin/sh -c " + quote("exec " + crash("exit3")),
     .trace = "sh.trace", .status = 3, .complete = true, .someMalloc = 4545},
    {.name = "CoarseClockRecordsToo",
     .args = "--clock coarse -o coarse.trace -- " + crash("exit3"), .trace = "coarse.trace",
     .status = 3, .complete = true},
};

// GoogleTest prints a case by its name.
void PrintTo(const ExitCase& c, std::ostream* os) { *os << c.name; }

class RecordExit : public testing::TestWithParam<ExitCase> {};

TEST_P(RecordExit, StatusAndTrace) {
  const ExitCase& c = GetParam();
  TempDir dir;
  const Result r = record(dir, c.args);
  EXPECT_EQ(r.status, c.status) << r.err;
  if (!c.err.empty()) {
    EXPECT_NE(r.err.find(c.err), std::string::npos) << r.err;
  }
  const TraceFile t = readTraceFile(dir / c.trace);
  const std::vector<Event>& events = t.events;
  EXPECT_EQ(t.complete, c.complete);
  EXPECT_EQ(std::string(t.program.path), std::filesystem::canonical(RECORD_CRASH).string());
  EXPECT_NE(t.program.pid, 0u);
  ASSERT_FALSE(events.empty());
  EXPECT_GT(events.size(), c.moreEventsThan);
  if (c.lastMalloc != 0) {
    EXPECT_EQ(events.back().op, Op::Malloc);
    EXPECT_EQ(events.back().size, c.lastMalloc);
  }
  if (c.someMalloc != 0) {
    bool found = false;
    for (const Event& e : events) found = found || (e.op == Op::Malloc && e.size == c.someMalloc);
    EXPECT_TRUE(found) << "no malloc(" << c.someMalloc << ") in " << c.trace;
  }
  if (c.afterMany != 0) {
    std::size_t a = 0;
    while (a < events.size() && !(events[a].op == Op::Malloc && events[a].size == 1)) ++a;
    ASSERT_LE(a + 100001, events.size());
    for (std::size_t i = 0; i < 100000; ++i) {
      ASSERT_EQ(events[a + i].op, Op::Malloc);
      ASSERT_EQ(events[a + i].size, 1 + i % 1000) << "event " << i;
    }
    EXPECT_EQ(events[a + 100000].size, c.afterMany);
  }
  if (c.spanNs != 0) {
    EXPECT_GT(events.back().timeNs, events.front().timeNs + c.spanNs);
  }
}

INSTANTIATE_TEST_SUITE_P(Ends, RecordExit, testing::ValuesIn(kExitCases), CaseName{});

// A disk that fills during the recording, as a file-size limit of 300 KiB (600 of /bin/sh's
// 512-byte blocks; past it write(2) fails with EFBIG; SIGXFSZ ignored, as a full disk sends
// none), in the second of two plain 256 KiB chunks: the recorder says so once and stops, the trace ends at the first chunk
// (valid, incomplete), and the program runs to its end and exits with its own status.
TEST(RecordDiskFull, TheRecorderStopsWithAMessageAndTheProgramRunsOn) {
  TempDir dir;
  const Result r = run(dir, "ulimit -f 600 && trap '' XFSZ && " + quote(kStrata) +
                                " record --no-compress -o full.trace -- " + crash("many3"));
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(r.err.find("strata-record: cannot write trace file"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("File too large; recording stopped, the program runs on"),
            std::string::npos) << r.err;
  const TraceFile t = readTraceFile(dir / "full.trace");
  EXPECT_FALSE(t.complete);
  EXPECT_GT(t.events.size(), 1000u) << r.err;
  EXPECT_LE(std::filesystem::file_size(dir / "full.trace"), 300u * 1024);
  EXPECT_NE(r.err.find("or the recorder could not write"), std::string::npos) << r.err;
}

// Time stamps measure real time on every clock: a 50 ms sleep between two mallocs shows as
// 50 ms give or take the clock's resolution (coarse: a kernel tick) and scheduling, and no
// event is stamped earlier than the one before it.
struct ClockCase {
  std::string name;
  std::string options;  // before -o
};

const ClockCase kClockCases[] = {
    {"Default", ""},
    {"Tsc", "--clock tsc "},
    {"Fine", "--clock fine "},
    {"Coarse", "--clock coarse "},
};

// GoogleTest prints a case by its name.
void PrintTo(const ClockCase& c, std::ostream* os) { *os << c.name; }

class RecordClock : public testing::TestWithParam<ClockCase> {};

TEST_P(RecordClock, MeasuresASleepBetweenTwoMallocs) {
  TempDir dir;
  const Result r = record(dir, GetParam().options + "-o sl.trace -- " + crash("sleep"));
  ASSERT_EQ(r.status, 0) << r.err;
  bool complete = false;
  const std::vector<Event> events = readEvents(dir / "sl.trace", &complete);
  EXPECT_TRUE(complete);
  std::uint64_t before = 0, after = 0;
  bool seenBefore = false, seenAfter = false;
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (i != 0) {
      ASSERT_GE(events[i].timeNs, events[i - 1].timeNs) << "event " << i;
    }
    if (events[i].op == Op::Malloc && events[i].size == 5151) {
      before = events[i].timeNs;
      seenBefore = true;
    }
    if (events[i].op == Op::Malloc && events[i].size == 5252) {
      after = events[i].timeNs;
      seenAfter = true;
    }
  }
  ASSERT_TRUE(seenBefore && seenAfter);
  const double ms = static_cast<double>(after - before) / 1e6;
  EXPECT_GE(ms, 60.0);  // 20 ms of work, then the 50 ms sleep
  EXPECT_LE(ms, 400.0);
}

INSTANTIATE_TEST_SUITE_P(Clocks, RecordClock, testing::ValuesIn(kClockCases), CaseName{});

#endif  // STRATA_RECORD_PRELOAD_TESTS

}  // namespace
