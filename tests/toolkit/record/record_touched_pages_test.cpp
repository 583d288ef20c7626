// `strata record` measuring how much of each large object the program touched
// (record_touch_program, see touch_program.cpp): the Touch event before the object's end or at
// exit, realloc, the threshold set by the environment or --touch-min, the sampling of sizes
// written whole, and fork.
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "record_run.hpp"
#include "strata/protocol/recorder_environment.hpp"

namespace {

#ifdef STRATA_RECORD_PRELOAD_TESTS

using strata::test::TempDir;
using strata::trace::Event;
using strata::trace::Op;
using namespace strata::test::record;

// The index of the Touch event naming object, or -1.
long findTouch(const std::vector<Event>& ev, std::uint64_t object) {
  for (std::size_t i = 0; i < ev.size(); ++i)
    if (ev[i].op == Op::Touch && ev[i].object == object) return static_cast<long>(i);
  return -1;
}

// Records `record_touch_program mode` into dir/name and reads the trace back.
TraceFile recordTouch(const TempDir& dir, const std::string& mode, const std::string& name,
                      Result* result = nullptr) {
  const Result r = record(dir, "-o " + name + " -- " + quote(RECORD_TOUCH) + " " + mode);
  EXPECT_EQ(r.status, 0) << r.err;
  if (result != nullptr) *result = r;
  return readTraceFile(dir / name);
}

// Checks that the object created by event `created` has one Touch, right before the event
// that frees it (free, on the same thread), with touched bytes in [low, high]; returns them.
std::uint64_t expectTouchBeforeFree(const std::vector<Event>& ev, long created, std::uint64_t low,
                                    std::uint64_t high) {
  if (created < 0) {
    ADD_FAILURE() << "the large object's creation is not in the trace";
    return 0;
  }
  const std::uint64_t id = ev[static_cast<std::size_t>(created)].object;
  const long t = findTouch(ev, id);
  if (t < 0 || static_cast<std::size_t>(t) + 1 >= ev.size()) {
    ADD_FAILURE() << "no Touch for object " << id << " before its end";
    return 0;
  }
  const Event& touch = ev[static_cast<std::size_t>(t)];
  const Event& next = ev[static_cast<std::size_t>(t) + 1];
  EXPECT_EQ(next.op, Op::Free);
  EXPECT_EQ(next.object, id);
  EXPECT_EQ(next.thread, touch.thread);
  EXPECT_GE(touch.size, low);
  EXPECT_LE(touch.size, high);
  return touch.size;
}

// One large object of the touch program's `mode`, made by `op` with `size` bytes: its Touch
// counts [low, high] bytes and comes right before its free, or (freed false: the object is
// still live at exit) at exit. The trace is complete.
struct TouchCase {
  std::string name;
  std::string mode;
  Op op;
  std::uint64_t size, low, high;
  bool freed;
};

const TouchCase kTouchCases[] = {
    // calloc of 8 MiB with one byte written in its fourth page: the replay must not write
    // 8 MiB, and must write that page (at least one page counted; the first page may count as
    // well, where the C library's header made it resident, and one more for rounding).
    {"CallocedArrayWithOnePageWrittenCountsAboutOnePage", "calloc", Op::Calloc, 8 * kMiB, kPage,
     kPage + 2 * kPage, true},
    {"FullyWrittenObjectCountsEveryByte", "memset", Op::Malloc, kMiB, kMiB, kMiB, true},
    // 2 MiB, 40 KiB of it written, still live at exit.
    {"LiveObjectIsTouchedAtExit", "live", Op::Malloc, 2 * kMiB, 40 * kKiB - 2 * kPage,
     40 * kKiB + 2 * kPage, false},
    // An aligned large object is measured like any other.
    {"AlignedObjectIsTouchedAtExit", "aligned", Op::Memalign, 2 * kMiB, 40 * kKiB - 2 * kPage,
     40 * kKiB + 2 * kPage, false},
};

// GoogleTest prints a case by its name.
void PrintTo(const TouchCase& c, std::ostream* os) { *os << c.name; }

class RecordTouchOne : public testing::TestWithParam<TouchCase> {};

TEST_P(RecordTouchOne, TouchedBytes) {
  const TouchCase& c = GetParam();
  TempDir dir;
  const TraceFile t = recordTouch(dir, c.mode, c.mode + ".trace");
  EXPECT_TRUE(t.complete);
  const long m = findCreate(t.events, c.op, c.size);
  if (c.freed) {
    expectTouchBeforeFree(t.events, m, c.low, c.high);
    return;
  }
  ASSERT_GE(m, 0);
  const long touch = findTouch(t.events, t.events[static_cast<std::size_t>(m)].object);
  ASSERT_GE(touch, 0);
  EXPECT_GE(t.events[static_cast<std::size_t>(touch)].size, c.low);
  EXPECT_LE(t.events[static_cast<std::size_t>(touch)].size, c.high);
}

INSTANTIATE_TEST_SUITE_P(Objects, RecordTouchOne, testing::ValuesIn(kTouchCases), CaseName{});

// malloc(64 KiB) all written, realloc to 4 MiB, 64 KiB more written: the old object was
// touched whole (its Touch comes right before the realloc), the new one about 128 KiB.
TEST(RecordTouch, ReallocGrowthCountsTheWrittenPartOnly) {
  TempDir dir;
  const TraceFile t = recordTouch(dir, "realloc", "tr.trace");
  const std::vector<Event>& ev = t.events;
  const long m = findCreate(ev, Op::Malloc, 64 * kKiB);
  ASSERT_GE(m, 0);
  const std::uint64_t oldId = ev[static_cast<std::size_t>(m)].object;
  const long touchOld = findTouch(ev, oldId);
  ASSERT_GE(touchOld, 0);
  ASSERT_LT(static_cast<std::size_t>(touchOld) + 1, ev.size());
  const Event& re = ev[static_cast<std::size_t>(touchOld) + 1];
  EXPECT_EQ(re.op, Op::Realloc);
  EXPECT_EQ(re.target, oldId);
  EXPECT_EQ(re.size, 4 * kMiB);
  EXPECT_EQ(ev[static_cast<std::size_t>(touchOld)].size, 64 * kKiB);
  expectTouchBeforeFree(ev, touchOld + 1, 128 * kKiB - 2 * kPage, 128 * kKiB + 2 * kPage);
}

// The touch threshold moved up past the program's 1 MiB object, or the measurement turned
// off, by hand (STRATA_TRACE_TOUCH_MIN) or by `strata record --touch-min` (off, or a size
// with a unit): the object is recorded, and no Touch at all.
struct ThresholdCase {
  std::string name;
  std::string environment;  // VAR=value words before `strata record`
  std::string options;      // after it
};

const std::string kTouchMinIs = std::string(strata::protocol::env::kTouchMin) + "=";

const ThresholdCase kThresholdCases[] = {
    {"EnvironmentOff", kTouchMinIs + "off ", ""},
    {"EnvironmentAbove", kTouchMinIs + "2000000 ", ""},
    {"OptionOff", "", "--touch-min off "},
    {"OptionAboveWithAUnit", "", "--touch-min 2M "},
};

// GoogleTest prints a case by its name.
void PrintTo(const ThresholdCase& c, std::ostream* os) { *os << c.name; }

class RecordTouchThreshold : public testing::TestWithParam<ThresholdCase> {};

TEST_P(RecordTouchThreshold, MovesOrTurnsOffTheMeasurement) {
  const ThresholdCase& c = GetParam();
  TempDir dir;
  const Result r = run(dir, c.environment + quote(kStrata) + " record " + c.options +
                                "-o ts.trace -- " + quote(RECORD_TOUCH) + " memset");
  ASSERT_EQ(r.status, 0) << r.err;
  const TraceFile t = readTraceFile(dir / "ts.trace");
  EXPECT_GE(findCreate(t.events, Op::Malloc, kMiB), 0);
  for (const Event& e : t.events) EXPECT_NE(e.op, Op::Touch);
}

INSTANTIATE_TEST_SUITE_P(Settings, RecordTouchThreshold, testing::ValuesIn(kThresholdCases),
                         CaseName{});

// Objects of a size the program writes whole are measured one in 16 once 32 in a row were
// touched whole; the first sampled one that is not puts every object back to being measured.
// --touch-all measures them all.
TEST(RecordTouch, SizesWrittenWholeAreSampledUntilOneIsNot) {
  for (const bool all : {false, true}) {
    SCOPED_TRACE(all ? "--touch-all" : "default");
    TempDir dir;
    const Result r = record(dir, std::string(all ? "--touch-all " : "") + "-o ts.trace -- " +
                                     quote(RECORD_TOUCH) + " sampling");
    ASSERT_EQ(r.status, 0) << r.err;
    const TraceFile t = readTraceFile(dir / "ts.trace");
    std::vector<std::uint64_t> objects;  // the 400 objects, in order
    for (const Event& e : t.events)
      if (e.op == Op::Malloc && e.size == 64 * kKiB) objects.push_back(e.object);
    ASSERT_EQ(objects.size(), 400u);
    std::vector<long> touched(400, -1);  // per object: its touched bytes, or -1 for no Touch
    for (std::size_t i = 0; i < objects.size(); ++i) {
      const long k = findTouch(t.events, objects[i]);
      if (k >= 0) touched[i] = static_cast<long>(t.events[static_cast<std::size_t>(k)].size);
    }
    auto measured = [&](std::size_t from, std::size_t to) {
      std::size_t n = 0;
      for (std::size_t i = from; i < to; ++i) n += touched[i] >= 0;
      return n;
    };
    for (std::size_t i = 0; i < 200; ++i) {
      if (touched[i] < 0) continue;
      EXPECT_EQ(touched[i], static_cast<long>(64 * kKiB)) << i;
    }
    for (std::size_t i = 200; i < 400; ++i) {
      if (touched[i] < 0) continue;
      EXPECT_LE(touched[i], static_cast<long>(3 * kPage)) << i;
    }
    if (all) {
      EXPECT_EQ(measured(0, 400), 400u);
      continue;
    }
    EXPECT_EQ(measured(0, 32), 32u);
    EXPECT_EQ(measured(32, 200), 168u / 16);  // one in 16 of the rest
    EXPECT_LT(measured(200, 216), 16u);       // until a sampled one shows a sparse object
    EXPECT_EQ(measured(216, 400), 184u);      // then every one
  }
}

// After fork each process measures its own pages: the child's trace re-creates the object
// and touches it at the child's exit with what both wrote; the parent's counts its own part.
TEST(RecordTouch, ForkChildTouchesTheObjectsItInherited) {
  TempDir dir;
  Result r;
  const TraceFile parent = recordTouch(dir, "fork", "tf.trace", &r);
  const long childPid = std::stol(r.out);
  const TraceFile child = readTraceFile(dir / ("tf.trace." + std::to_string(childPid)));
  EXPECT_TRUE(parent.complete);
  EXPECT_TRUE(child.complete);
  auto touchedAtExit = [](const TraceFile& t) -> std::uint64_t {
    const long m = findCreate(t.events, Op::Malloc, 4 * kMiB);
    if (m < 0) return 0;
    const long touch = findTouch(t.events, t.events[static_cast<std::size_t>(m)].object);
    return touch < 0 ? 0 : t.events[static_cast<std::size_t>(touch)].size;
  };
  const std::uint64_t p = touchedAtExit(parent), c = touchedAtExit(child);
  EXPECT_GE(p, 16 * kKiB - 2 * kPage);
  EXPECT_LE(p, 16 * kKiB + 2 * kPage);
  EXPECT_GE(c, 32 * kKiB - 2 * kPage);
  EXPECT_LE(c, 32 * kKiB + 2 * kPage);
}

#endif  // STRATA_RECORD_PRELOAD_TESTS

}  // namespace
