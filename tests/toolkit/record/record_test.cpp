// `strata record` end to end: runs the built `strata` executable on the programs beside this
// file (see tests.cmake) and reads the traces back with TraceReader, checking them event for
// event: op, flags, size, alignment, object and target ids, thread. Also fork (two traces,
// the child's self-contained), crashes and exits (valid traces, the program's exit status
// passed on), exec, and bad usage.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <set>
#include <string>
#include <vector>

#include "common/process.hpp"
#include "strata/protocol/recorder_environment.hpp"
#include "strata/trace/reader.hpp"

namespace {

using strata::trace::Event;
using strata::trace::kFlagAligned;
using strata::trace::kFlagFailed;
using strata::trace::kFlagNull;
using strata::trace::kNoObject;
using strata::trace::Op;
namespace fs = std::filesystem;

const std::string kStrata = STRATA_CLI_PATH;

using strata::test::slurp;
using strata::test::TempDir;

// A word for /bin/sh, single-quoted.
std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// What a command did: its exit status (128+N for signal N, as a shell reports it), stdout
// and stderr.
struct Result {
  int status = -1;
  std::string out, err;
};

// Runs a shell command line in dir, capturing its output there.
Result run(const TempDir& dir, const std::string& commandLine) {
  const std::string out = dir / "stdout.txt", err = dir / "stderr.txt";
  const std::string line = "cd " + quote(dir.path().string()) + " && " + commandLine + " > " + quote(out) +
                           " 2> " + quote(err);
  const int w = std::system(line.c_str());
  Result r;
  r.status = WIFEXITED(w) ? WEXITSTATUS(w) : 128 + WTERMSIG(w);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// `strata record ARGS` (ARGS already shell words).
Result record(const TempDir& dir, const std::string& args) {
  return run(dir, quote(kStrata) + " record " + args);
}

TEST(RecordUsage, NoArguments) {
  TempDir dir;
  const Result r = record(dir, "");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("missing '--' and the COMMAND"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("usage: strata record"), std::string::npos) << r.err;
}

TEST(RecordUsage, BadOptions) {
  TempDir dir;
  Result r = record(dir, "-o");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("-o needs a FILE"), std::string::npos) << r.err;
  r = record(dir, "--frobnicate -- true");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("unknown option '--frobnicate'"), std::string::npos) << r.err;
  r = record(dir, "true");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("missing '--' before the command 'true'"), std::string::npos) << r.err;
  r = record(dir, "--clock slow -- true");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--clock takes tsc, fine or coarse"), std::string::npos) << r.err;
  r = record(dir, "-o x.trace --");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("missing the COMMAND"), std::string::npos) << r.err;
}

TEST(RecordUsage, RecorderLibraryMissing) {
  TempDir dir;
  const Result r = run(dir, "STRATA_LIB_DIR=" + quote(dir / "nolib") + " " + quote(kStrata) +
                                " record -- true");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("strata_toolkit"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("libstrata-record.so"), std::string::npos) << r.err;
}

TEST(RecordUsage, OutputNotWritable) {
  TempDir dir;
  const Result r = record(dir, "-o " + quote(dir / "no/such/dir/x.trace") + " -- true");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("cannot write"), std::string::npos) << r.err;
}

TEST(RecordUsage, CommandNotFound) {
  TempDir dir;
  const Result r = record(dir, "-o x.trace -- " + quote(dir / "no-such-program"));
  EXPECT_EQ(r.status, 127);
  EXPECT_NE(r.err.find("command not found"), std::string::npos) << r.err;
}

#ifdef STRATA_RECORD_PRELOAD_TESTS

// Every event of a trace file; fails the test (by exception) when it does not read.
std::vector<Event> readEvents(const std::string& path, bool* complete) {
  const std::string bytes = slurp(path);
  return strata::trace::readTrace(reinterpret_cast<const unsigned char*>(bytes.data()),
                                  bytes.size(), complete);
}

// One expected event: indexes into the expected list name the events that created the
// object and target (-1: none).
struct Expect {
  Op op;
  std::uint8_t flags;
  std::uint64_t size;
  unsigned align;
  int object;
  int target;
};

// The sequence record_sequence_program performs, as events.
std::vector<Expect> sequenceExpectations() {
  std::vector<Expect> x;
  auto add = [&x](Op op, std::uint8_t flags = 0, std::uint64_t size = 0, unsigned align = 0,
                  int object = -1, int target = -1) {
    x.push_back({op, flags, size, align, object, target});
    return static_cast<int>(x.size()) - 1;
  };
  const std::uint64_t huge = std::uint64_t{1} << 62;
  // A Touch's size here is the most it may be: the large markers are never written, so only
  // their partial edge pages count as touched (two pages at most).
  const std::uint64_t edges = 2 * 4096;
  const int mark = add(Op::Malloc, 0, 1000001);
  add(Op::Touch, 0, edges, 0, mark);
  add(Op::Free, 0, 0, 0, mark);
  const int m = add(Op::Malloc, 0, 100);
  const int c = add(Op::Calloc, 0, 200);
  const int r0 = add(Op::Realloc, kFlagNull, 50);
  const int r1 = add(Op::Realloc, 0, 5000, 0, -1, r0);
  const int r2 = add(Op::Realloc, 0, 10, 0, -1, r1);
  const int z = add(Op::Malloc, 0, 30);
  add(Op::Realloc, kFlagFailed, 0, 0, -1, z);
  add(Op::Free, kFlagNull);
  add(Op::Malloc, kFlagFailed, huge);
  add(Op::Realloc, kFlagFailed, huge, 0, -1, m);
  const int ra = add(Op::Realloc, kFlagNull, 100);
  const int ma = add(Op::Memalign, kFlagAligned, 100, 6);
  const int pm = add(Op::Memalign, kFlagAligned, 300, 8);
  const int aa = add(Op::Memalign, kFlagAligned, 256, 7);
  const int va = add(Op::Memalign, kFlagAligned, 10, 12);
  const int pv = add(Op::Memalign, kFlagAligned, 10, 12);
  const int n1 = add(Op::New, 0, sizeof(int));
  const int n2 = add(Op::New, 0, 10 * sizeof(int));
  const int na = add(Op::New, kFlagAligned, 64, 6);
  const int nt = add(Op::New, 0, 77);
  add(Op::New, kFlagFailed, huge);
  add(Op::Delete, 0, 0, 0, n1);
  add(Op::Delete, 0, 0, 0, n2);
  add(Op::Delete, 0, 0, 0, na);
  add(Op::Delete, 0, 0, 0, nt);
  add(Op::Delete, kFlagNull);
  add(Op::New, kFlagFailed, huge);  // the throwing one: its exception's malloc/free may follow
  for (int f : {m, c, r2, ra, ma, pm, aa, va, pv}) add(Op::Free, 0, 0, 0, f);

  const int R = add(Op::ReapCreate, kFlagNull);
  const int C = add(Op::ReapCreate, 0, 0, 0, -1, R);
  const int rx = add(Op::ReapMalloc, 0, 40, 0, -1, R);
  const int ry = add(Op::ReapMalloc, 0, 24, 0, -1, C);
  add(Op::ReapMalloc, 0, 100, 0, -1, C);
  add(Op::ReapFree, 0, 0, 0, ry, C);
  add(Op::ReapMalloc, 0, 16, 0, -1, C);
  add(Op::ReapFree, 0, 0, 0, rx, R);
  add(Op::ReapFree, kFlagNull, 0, 0, -1, R);
  add(Op::ReapClear, 0, 0, 0, -1, R);
  add(Op::ReapDestroy, 0, 0, 0, -1, R);

  const int P = add(Op::ReapCreate, kFlagNull);
  const int po = add(Op::ReapMalloc, 0, 12, 0, -1, P);
  add(Op::ReapFree, 0, 0, 0, po, P);
  add(Op::ReapClear, 0, 0, 0, -1, P);
  add(Op::ReapDestroy, 0, 0, 0, -1, P);

  const int g = add(Op::ReapCreate, kFlagNull);
  add(Op::ReapMalloc, 0, 33, 0, -1, g);
  add(Op::ReapMalloc, 0, 10, 0, -1, g);
  add(Op::ReapMalloc, 0, 6, 0, -1, g);
  add(Op::ReapClear, 0, 0, 0, -1, g);
  add(Op::ReapDestroy, 0, 0, 0, -1, g);

  const int os = add(Op::ReapCreate, kFlagNull);
  add(Op::ReapMalloc, 0, 20, 0, -1, os);
  add(Op::ReapMalloc, 0, 4, 0, -1, os);  // "abc" and its 0, finished
  const int oc = add(Op::ReapMalloc, 0, 6, 0, -1, os);
  const int od = add(Op::ReapMalloc, 0, 2, 0, -1, os);
  add(Op::ReapFree, 0, 0, 0, od, os);
  add(Op::ReapFree, 0, 0, 0, oc, os);
  add(Op::ReapMalloc, 0, 8, 0, -1, os);
  add(Op::ReapDestroy, 0, 0, 0, -1, os);

  const int end = add(Op::Malloc, 0, 1000002);
  add(Op::Touch, 0, edges, 0, end);
  add(Op::Free, 0, 0, 0, end);
  return x;
}

TEST(Record, KnownSequenceEventForEvent) {
  TempDir dir;
  const Result r = record(dir, "-o seq.trace -- " + quote(RECORD_SEQUENCE));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("complete"), std::string::npos) << r.err;
  bool complete = false;
  const std::vector<Event> events = readEvents(dir / "seq.trace", &complete);
  EXPECT_TRUE(complete);

  std::size_t a = 0;
  while (a < events.size() && !(events[a].op == Op::Malloc && events[a].size == 1000001)) ++a;
  ASSERT_LT(a, events.size()) << "the start marker malloc(1000001) is not in the trace";
  const std::uint32_t thread = events[a].thread;
  const std::vector<Expect> want = sequenceExpectations();
  std::vector<std::uint64_t> idOf(want.size(), kNoObject);
  for (std::size_t j = 0; j < want.size(); ++j, ++a) {
    ASSERT_LT(a, events.size()) << "the trace ends before expected event " << j;
    const Event& e = events[a];
    const Expect& x = want[j];
    SCOPED_TRACE("expected event " + std::to_string(j) + " (op " +
                 std::to_string(static_cast<int>(x.op)) + "), trace event " + std::to_string(a));
    ASSERT_EQ(static_cast<int>(e.op), static_cast<int>(x.op));
    EXPECT_EQ(e.flags, x.flags);
    EXPECT_EQ(e.thread, thread);
    if (x.op == Op::Touch) {
      EXPECT_LE(e.size, x.size);
    } else {
      EXPECT_EQ(e.size, x.size);
    }
    EXPECT_EQ(e.alignLog2, x.align);
    if (x.object >= 0) {
      EXPECT_EQ(e.object, idOf[static_cast<std::size_t>(x.object)]);
    }
    EXPECT_EQ(e.target, x.target >= 0 ? idOf[static_cast<std::size_t>(x.target)] : kNoObject);
    if (strata::trace::opCreates(e.op) && !(e.flags & kFlagFailed)) {
      EXPECT_NE(e.object, kNoObject);
      idOf[j] = e.object;
    }
    if (a > 0) {
      EXPECT_GE(e.timeNs, events[a - 1].timeNs) << "time runs backwards on one thread";
    }
    if (j > 0 && x.op == Op::New && x.flags == kFlagFailed && want[j - 1].op == Op::Delete) {
      // The throwing operator new: libstdc++ mallocs the bad_alloc it throws and frees it
      // after the catch. Those two events (if any) belong to the program too.
      std::vector<std::uint64_t> skipped;
      while (a + 1 < events.size() && skipped.size() < 4) {
        const Event& s = events[a + 1];
        if (s.op == Op::Malloc && s.size < 1024 && !(s.flags & kFlagFailed)) {
          skipped.push_back(s.object);
        } else if (s.op == Op::Free &&
                   std::find(skipped.begin(), skipped.end(), s.object) != skipped.end()) {
          skipped.push_back(kNoObject);
        } else {
          break;
        }
        ++a;
      }
    }
  }
}

TEST(Record, ThreadsKeepTheirOrderAndCrossThreadFreesMatch) {
  constexpr int kThreads = 4, kObjects = 200;
  TempDir dir;
  const Result r = record(dir, "-o th.trace -- " + quote(RECORD_THREADS));
  ASSERT_EQ(r.status, 0) << r.err;
  bool complete = false;
  const std::vector<Event> events = readEvents(dir / "th.trace", &complete);
  EXPECT_TRUE(complete);

  struct Obj {
    int t, i;
  };
  std::map<std::uint64_t, Obj> objects;              // id -> (allocating thread, index)
  std::map<std::uint32_t, int> workerOf;             // recorded thread -> worker t
  std::vector<std::vector<std::string>> seq(kThreads);  // per worker, its events in order
  for (const Event& e : events) {
    if (e.op == Op::Malloc && e.size >= 1000 && e.size < 1000u * (kThreads + 1) &&
        e.size % 1000 < kObjects) {
      const int t = static_cast<int>(e.size / 1000) - 1, i = static_cast<int>(e.size % 1000);
      objects[e.object] = {t, i};
      auto [it, fresh] = workerOf.emplace(e.thread, t);
      ASSERT_EQ(it->second, t) << "thread " << e.thread << " allocated for two workers";
      (void)fresh;
      seq[static_cast<std::size_t>(t)].push_back("m" + std::to_string(i));
    } else if (e.op == Op::Free && objects.count(e.object)) {
      const Obj o = objects[e.object];
      ASSERT_TRUE(workerOf.count(e.thread)) << "a free on a thread that allocated nothing";
      const int t = workerOf[e.thread];
      EXPECT_EQ(o.t, (t + 1) % kThreads) << "worker " << t << " freed another's object";
      seq[static_cast<std::size_t>(t)].push_back("f" + std::to_string(o.i));
      objects[e.object].t = -1;  // a second free would now fail the check above
    }
  }
  ASSERT_EQ(workerOf.size(), static_cast<std::size_t>(kThreads)) << "one recorded thread per worker";
  std::vector<std::string> expected;
  for (int i = 0; i < kObjects; ++i) expected.push_back("m" + std::to_string(i));
  for (int i = 0; i < kObjects; ++i) expected.push_back("f" + std::to_string(i));
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(seq[static_cast<std::size_t>(t)], expected) << "worker " << t;
}

// Threads that allocate all at once and free or reallocate each other's objects: whatever the
// interleaving, the trace must be a history that could have happened — every free and realloc
// names an object that is live at that point, none twice — with every call the program made
// (the runtime's own few allocations come on top), and times that never go backwards.
TEST(Record, ObjectsHandedBetweenBusyThreadsFormAConsistentHistory) {
  for (const char* threads : {"2", "4", "8"}) {
    SCOPED_TRACE(std::string(threads) + " threads");
    TempDir dir;
    const Result r = record(dir, "-o ho.trace -- " + quote(RECORD_HANDOFF) + " " + threads + " 100000");
    ASSERT_EQ(r.status, 0) << r.err;
    long mallocs = -1, frees = -1, reallocs = -1;
    ASSERT_EQ(std::sscanf(r.out.c_str(), "mallocs=%ld frees=%ld reallocs=%ld", &mallocs, &frees,
                          &reallocs), 3) << r.out;
    bool complete = false;
    const std::vector<Event> events = readEvents(dir / "ho.trace", &complete);
    EXPECT_TRUE(complete);
    std::vector<char> live;
    std::uint64_t next = 0;
    long seen[strata::trace::kOpCount] = {};
    std::set<std::uint32_t> threadsSeen;
    for (std::size_t i = 0; i < events.size(); ++i) {
      const Event& e = events[i];
      ++seen[static_cast<unsigned>(e.op)];
      threadsSeen.insert(e.thread);
      if (i != 0) {
        ASSERT_GE(e.timeNs, events[i - 1].timeNs) << "event " << i;
      }
      if (strata::trace::targetPresent(e.op, e.flags) && e.op == Op::Realloc) {
        ASSERT_TRUE(live.at(e.target)) << "event " << i << " reallocates dead object " << e.target;
        if (!(e.flags & kFlagFailed)) live[e.target] = 0;
      }
      if (e.op == Op::Touch) {  // names a live object without ending it: its end follows
        ASSERT_TRUE(live.at(e.object)) << "event " << i << " touches dead object " << e.object;
        ASSERT_LT(i + 1, events.size());
        const Event& n = events[i + 1];
        EXPECT_EQ(n.thread, e.thread) << "event " << i;
        EXPECT_TRUE(n.object == e.object || (n.op == Op::Realloc && n.target == e.object))
            << "event " << i << ": the touched object does not end next";
      } else if (strata::trace::objectPresent(e.op, e.flags)) {
        ASSERT_TRUE(live.at(e.object)) << "event " << i << " frees dead object " << e.object;
        live[e.object] = 0;
      }
      if (strata::trace::opCreates(e.op) && !(e.flags & kFlagFailed)) {
        ASSERT_EQ(live.size(), next);
        live.push_back(1);
        ++next;
      }
    }
    EXPECT_EQ(seen[static_cast<unsigned>(Op::Realloc)], reallocs);
    EXPECT_GE(seen[static_cast<unsigned>(Op::Malloc)], mallocs);
    EXPECT_LE(seen[static_cast<unsigned>(Op::Malloc)], mallocs + 200);
    EXPECT_GE(seen[static_cast<unsigned>(Op::Free)], frees);
    EXPECT_LE(seen[static_cast<unsigned>(Op::Free)], frees + 200);
    EXPECT_GE(threadsSeen.size(), static_cast<std::size_t>(std::atoi(threads)));
    long stillLive = 0;
    for (char l : live) stillLive += l;
    EXPECT_LE(stillLive, 200) << "the program frees every object it made";
  }
}

TEST(Record, ForkWritesTwoTracesAndTheChildsIsSelfContained) {
  TempDir dir;
  const Result r = record(dir, "-o fk.trace -- " + quote(RECORD_FORK));
  ASSERT_EQ(r.status, 0) << r.err;
  const long childPid = std::stol(r.out);
  const std::string childTrace = dir / ("fk.trace." + std::to_string(childPid));
  EXPECT_NE(r.err.find(childTrace), std::string::npos) << r.err;

  bool complete = false;
  const std::vector<Event> parent = readEvents(dir / "fk.trace", &complete);
  EXPECT_TRUE(complete);
  auto sizes = [](const std::vector<Event>& ev, Op op) {
    std::vector<std::uint64_t> s;
    for (const Event& e : ev)
      if (e.op == op) s.push_back(e.size);
    return s;
  };
  auto has = [](const std::vector<std::uint64_t>& v, std::uint64_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  const auto parentMallocs = sizes(parent, Op::Malloc);
  EXPECT_TRUE(has(parentMallocs, 111) && has(parentMallocs, 222) && has(parentMallocs, 555));
  EXPECT_FALSE(has(parentMallocs, 444)) << "the child's malloc is in the parent's trace";

  const std::vector<Event> child = readEvents(childTrace, &complete);
  EXPECT_TRUE(complete);
  // The child's trace starts with what it inherited: the reap, then the live objects
  // (111, 333 and the reap's 77), at least those; never the freed 222 one.
  ASSERT_GE(child.size(), 4u);
  EXPECT_EQ(child[0].op, Op::ReapCreate);
  std::map<std::uint64_t, std::uint64_t> inherited;  // size -> id
  std::size_t k = 1;
  for (; k < child.size() && child[k].timeNs == child[0].timeNs &&
         (child[k].op == Op::Malloc || child[k].op == Op::ReapMalloc || child[k].op == Op::Memalign);
       ++k)
    inherited[child[k].size] = child[k].object;
  ASSERT_TRUE(inherited.count(111) && inherited.count(333) && inherited.count(77));
  EXPECT_FALSE(inherited.count(222));
  for (std::size_t j = 1; j < k; ++j) {
    if (child[j].size == 77) {
      EXPECT_EQ(child[j].op, Op::ReapMalloc);
      EXPECT_EQ(child[j].target, child[0].object);
    }
  }
  // Then what the child did, naming the re-created ids.
  std::vector<Event> rest(child.begin() + static_cast<std::ptrdiff_t>(k), child.end());
  auto at = [&](Op op, std::uint64_t object) {
    for (std::size_t j = 0; j < rest.size(); ++j)
      if (rest[j].op == op && rest[j].object == object) return static_cast<long>(j);
    return -1L;
  };
  const long free111 = at(Op::Free, inherited[111]);
  const long free77 = at(Op::ReapFree, inherited[77]);
  const long free333 = at(Op::Free, inherited[333]);
  EXPECT_GE(free111, 0);
  EXPECT_GT(free77, free111);
  EXPECT_GT(free333, free77);
  EXPECT_TRUE(has(sizes(rest, Op::Malloc), 444));
  EXPECT_FALSE(has(sizes(rest, Op::Malloc), 555));
}

TEST(Record, AbortLeavesEveryEventAndStatus134) {
  TempDir dir;
  const Result r = record(dir, "-o ab.trace -- " + quote(RECORD_CRASH) + " abort");
  EXPECT_EQ(r.status, 134) << r.err;
  EXPECT_NE(r.err.find("incomplete"), std::string::npos) << r.err;
  bool complete = true;
  const std::vector<Event> events = readEvents(dir / "ab.trace", &complete);
  EXPECT_FALSE(complete);
  // 100000 mallocs of 1 + i % 1000 (several chunks), then 4242, the last before abort().
  std::size_t a = 0;
  while (a < events.size() && !(events[a].op == Op::Malloc && events[a].size == 1)) ++a;
  ASSERT_LE(a + 100001, events.size());
  for (std::size_t i = 0; i < 100000; ++i) {
    ASSERT_EQ(events[a + i].op, Op::Malloc);
    ASSERT_EQ(events[a + i].size, 1 + i % 1000) << "event " << i;
  }
  EXPECT_EQ(events[a + 100000].size, 4242u);
}

TEST(Record, SegfaultLeavesTheTraceAndStatus139) {
  TempDir dir;
  const Result r = record(dir, "-o sg.trace -- " + quote(RECORD_CRASH) + " segv");
  EXPECT_EQ(r.status, 139) << r.err;
  bool complete = true;
  const std::vector<Event> events = readEvents(dir / "sg.trace", &complete);
  EXPECT_FALSE(complete);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().op, Op::Malloc);
  EXPECT_EQ(events.back().size, 4343u);
}

TEST(Record, UnderscoreExitFinishesTheTraceAndPassesTheStatus) {
  TempDir dir;
  const Result r = record(dir, "-o ex.trace -- " + quote(RECORD_CRASH) + " _exit");
  EXPECT_EQ(r.status, 5) << r.err;
  bool complete = false;
  const std::vector<Event> events = readEvents(dir / "ex.trace", &complete);
  EXPECT_TRUE(complete);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().size, 4444u);
}

TEST(Record, QuickExitFinishesTheTraceAndPassesTheStatus) {
  TempDir dir;
  const Result r = record(dir, "-o qe.trace -- " + quote(RECORD_CRASH) + " quick");
  EXPECT_EQ(r.status, 6) << r.err;
  bool complete = false;
  const std::vector<Event> events = readEvents(dir / "qe.trace", &complete);
  EXPECT_TRUE(complete);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().size, 4646u);
}

TEST(Record, ExitStatusIsPassedOnAndTheDefaultNameUsed) {
  TempDir dir;
  const Result r = record(dir, "-- " + quote(RECORD_CRASH) + " exit3");
  EXPECT_EQ(r.status, 3) << r.err;
  bool complete = false;
  const std::vector<Event> events = readEvents(dir / "record_crash_program.trace", &complete);
  EXPECT_TRUE(complete);
  bool found = false;
  for (const Event& e : events) found = found || (e.op == Op::Malloc && e.size == 4545);
  EXPECT_TRUE(found);
}

TEST(Record, SigkillLeavesAValidPrefix) {
  TempDir dir;
  const Result r = record(dir, "-o kl.trace -- " + quote(RECORD_CRASH) + " kill");
  EXPECT_EQ(r.status, 137) << r.err;
  bool complete = true;
  const std::vector<Event> events = readEvents(dir / "kl.trace", &complete);
  EXPECT_FALSE(complete);
  // Whole chunks were written as they filled: 100000 events of 4-5 bytes fill several.
  EXPECT_GT(events.size(), 30000u);
}

TEST(Record, FineClockAdvancesAndCoarseClockRecordsToo) {
  TempDir dir;
  Result r = record(dir, "-o fine.trace -- " + quote(RECORD_CRASH) + " abort");
  EXPECT_EQ(r.status, 134) << r.err;
  bool complete = true;
  std::vector<Event> events = readEvents(dir / "fine.trace", &complete);
  ASSERT_GT(events.size(), 100000u);
  // 100000 mallocs take well over a microsecond: a nanosecond clock shows it.
  EXPECT_GT(events.back().timeNs, events.front().timeNs + 1000);
  r = record(dir, "--clock coarse -o coarse.trace -- " + quote(RECORD_CRASH) + " exit3");
  EXPECT_EQ(r.status, 3) << r.err;
  events = readEvents(dir / "coarse.trace", &complete);
  EXPECT_TRUE(complete);
  EXPECT_FALSE(events.empty());
}

// A program killed by SIGPIPE (the reader of its pipe went away: `prog | head`) keeps its trace.
TEST(Record, SigpipeLeavesTheTraceAndStatus141) {
  TempDir dir;
  const Result r = record(dir, "-o pp.trace -- " + quote(RECORD_CRASH) + " pipe");
  EXPECT_EQ(r.status, 128 + SIGPIPE) << r.err;
  bool complete = true;
  const std::vector<Event> events = readEvents(dir / "pp.trace", &complete);
  EXPECT_FALSE(complete);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().op, Op::Malloc);
  EXPECT_EQ(events.back().size, 4747u);
}

// Time stamps measure real time on every clock: a 50 ms sleep between two mallocs shows as
// 50 ms give or take the clock's resolution (coarse: a kernel tick) and scheduling, and no
// event is stamped earlier than the one before it.
TEST(Record, EveryClockMeasuresASleepBetweenTwoMallocs) {
  for (const char* clock : {"", "--clock tsc ", "--clock fine ", "--clock coarse "}) {
    SCOPED_TRACE(clock);
    TempDir dir;
    const Result r = record(dir, std::string(clock) + "-o sl.trace -- " + quote(RECORD_CRASH) + " sleep");
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
}

TEST(Record, ExecRestartsTheTraceForTheNewProgram) {
  TempDir dir;
  const Result r =
      record(dir, "-o sh.trace -- /bin/sh -c " + quote("exec " + quote(RECORD_CRASH) + " exit3"));
  EXPECT_EQ(r.status, 3) << r.err;
  bool complete = false;
  const std::vector<Event> events = readEvents(dir / "sh.trace", &complete);
  EXPECT_TRUE(complete);
  bool found = false;
  for (const Event& e : events) found = found || (e.op == Op::Malloc && e.size == 4545);
  EXPECT_TRUE(found) << "sh.trace is not the exec'd program's trace";
}

// A trace's events and its program chunk.
struct TraceFile {
  std::vector<Event> events;
  strata::trace::ProgramInfo program;
  bool complete = false;
};

TraceFile readTraceFile(const std::string& path) {
  const std::string bytes = slurp(path);
  strata::trace::TraceReader<strata::trace::MemorySource> reader(strata::trace::MemorySource{
      reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()});
  TraceFile t;
  Event e;
  strata::trace::ReadStatus st;
  while ((st = reader.next(e)) == strata::trace::ReadStatus::Event) t.events.push_back(e);
  EXPECT_EQ(st, strata::trace::ReadStatus::End) << path << ": " << reader.error().message();
  t.program = reader.program();
  t.complete = reader.complete();
  return t;
}

constexpr std::uint64_t kPage = 4096;
constexpr std::uint64_t kKiB = 1024, kMiB = 1024 * kKiB;

// The index of the first event creating an object of `size` bytes with op, or -1.
long findCreate(const std::vector<Event>& ev, Op op, std::uint64_t size, std::size_t from = 0) {
  for (std::size_t i = from; i < ev.size(); ++i)
    if (ev[i].op == op && ev[i].size == size && !(ev[i].flags & kFlagFailed))
      return static_cast<long>(i);
  return -1;
}

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

// calloc of 8 MiB with one byte written in its fourth page: the replay must not write 8 MiB,
// and must write that page (at least one page counted; the first page may count as well,
// where the C library's header made it resident, and one more for rounding).
TEST(RecordTouch, CallocedArrayWithOnePageWrittenCountsAboutOnePage) {
  TempDir dir;
  const TraceFile t = recordTouch(dir, "calloc", "tc.trace");
  EXPECT_TRUE(t.complete);
  const long c = findCreate(t.events, Op::Calloc, 8 * kMiB);
  expectTouchBeforeFree(t.events, c, kPage, kPage + 2 * kPage);
}

TEST(RecordTouch, FullyWrittenObjectCountsEveryByte) {
  TempDir dir;
  const TraceFile t = recordTouch(dir, "memset", "tm.trace");
  const long m = findCreate(t.events, Op::Malloc, kMiB);
  expectTouchBeforeFree(t.events, m, kMiB, kMiB);
}

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

// The touch threshold set by hand (STRATA_TRACE_TOUCH_MIN) moves up, or the measurement is
// turned off.
TEST(RecordTouch, ThresholdSettingMovesOrTurnsOffTheMeasurement) {
  for (const char* setting : {"off", "2000000"}) {
    SCOPED_TRACE(setting);
    TempDir dir;
    const Result r = run(dir, std::string(strata::protocol::env::kTouchMin) + "=" + setting + " " +
                                  quote(kStrata) + " record -o ts.trace -- " + quote(RECORD_TOUCH) +
                                  " memset");
    ASSERT_EQ(r.status, 0) << r.err;
    const TraceFile t = readTraceFile(dir / "ts.trace");
    EXPECT_GE(findCreate(t.events, Op::Malloc, kMiB), 0);
    for (const Event& e : t.events) EXPECT_NE(e.op, Op::Touch);
  }
}

// `strata record --touch-min` sets the same: off, or a size with a unit; a bad one is refused.
TEST(RecordTouch, TouchMinOptionMovesOrTurnsOffTheMeasurement) {
  for (const char* setting : {"off", "2M"}) {
    SCOPED_TRACE(setting);
    TempDir dir;
    const Result r = record(dir, std::string("--touch-min ") + setting + " -o tm.trace -- " +
                                     quote(RECORD_TOUCH) + " memset");
    ASSERT_EQ(r.status, 0) << r.err;
    const TraceFile t = readTraceFile(dir / "tm.trace");
    EXPECT_GE(findCreate(t.events, Op::Malloc, kMiB), 0);
    for (const Event& e : t.events) EXPECT_NE(e.op, Op::Touch);
  }
  TempDir dir;
  const Result bad = record(dir, "--touch-min 12q -- true");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--touch-min takes a size"), std::string::npos) << bad.err;
}

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

// Records `mode` of the touch program: its large object made by `op` (2 MiB, 40 KiB of it
// written), still live at exit, gets its Touch at the end of the trace.
void expectTouchedAtExit(const char* mode, Op op) {
  TempDir dir;
  const TraceFile t = recordTouch(dir, mode, std::string(mode) + ".trace");
  EXPECT_TRUE(t.complete);
  const long m = findCreate(t.events, op, 2 * kMiB);
  ASSERT_GE(m, 0);
  const long touch = findTouch(t.events, t.events[static_cast<std::size_t>(m)].object);
  ASSERT_GE(touch, 0);
  EXPECT_GE(t.events[static_cast<std::size_t>(touch)].size, 40 * kKiB - 2 * kPage);
  EXPECT_LE(t.events[static_cast<std::size_t>(touch)].size, 40 * kKiB + 2 * kPage);
}

TEST(RecordTouch, LiveObjectIsTouchedAtExit) { expectTouchedAtExit("live", Op::Malloc); }

// An aligned large object is measured like any other.
TEST(RecordTouch, AlignedObjectIsTouchedAtExit) { expectTouchedAtExit("aligned", Op::Memalign); }

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

// Threads created one after another, each allocating, freeing a large object and ending with
// a thread_local destructor and a pthread key destructor that free: every thread's events lie between its ThreadStart
// (naming the main thread, 0) and its ThreadEnd, and nothing of it comes after.
TEST(RecordThreads, EachThreadIsBracketedByItsStartAndEnd) {
  constexpr int kThreads = 8;
  TempDir dir;
  const Result r = record(dir, "-o lt.trace -- " + quote(RECORD_LIFETIMES) + " " +
                                   std::to_string(kThreads));
  ASSERT_EQ(r.status, 0) << r.err;
  const TraceFile t = readTraceFile(dir / "lt.trace");
  EXPECT_TRUE(t.complete);
  const std::vector<Event>& ev = t.events;
  const long marker = findCreate(ev, Op::Malloc, 4000);
  ASSERT_GE(marker, 0);
  EXPECT_EQ(ev[static_cast<std::size_t>(marker)].thread, 0u) << "the main thread is thread 0";

  std::map<std::uint32_t, std::vector<std::size_t>> byThread;  // thread -> its event indexes
  for (std::size_t i = 0; i < ev.size(); ++i) byThread[ev[i].thread].push_back(i);
  int workers = 0;
  std::set<int> seenWorkers;
  for (const auto& [thread, idx] : byThread) {
    if (thread == 0) {
      for (std::size_t i : idx) {
        EXPECT_NE(ev[i].op, Op::ThreadStart) << "the main thread has no ThreadStart";
        EXPECT_NE(ev[i].op, Op::ThreadEnd);
      }
      continue;
    }
    SCOPED_TRACE("thread " + std::to_string(thread));
    ++workers;
    const Event& first = ev[idx.front()];
    ASSERT_EQ(first.op, Op::ThreadStart);
    EXPECT_EQ(first.target, 0u);
    EXPECT_EQ(ev[idx.back()].op, Op::ThreadEnd);
    int worker = -1;
    bool ownFree = false, tlsFree = false, keyFree = false, bigTouched = false;
    std::map<std::uint64_t, std::uint64_t> sizeOf;
    for (std::size_t k = 1; k + 1 < idx.size(); ++k) {
      const Event& e = ev[idx[k]];
      EXPECT_NE(e.op, Op::ThreadStart);
      EXPECT_NE(e.op, Op::ThreadEnd);
      if (strata::trace::opCreates(e.op)) sizeOf[e.object] = e.size;
      if (e.op == Op::Malloc && e.size >= 5000 && e.size < 5000 + kThreads) {
        worker = static_cast<int>(e.size - 5000);
      }
      if (e.op == Op::Free && sizeOf.count(e.object)) {
        const std::uint64_t size = sizeOf[e.object];
        ownFree = ownFree || (size >= 5000 && size < 5000 + kThreads);
        tlsFree = tlsFree || (size >= 6000 && size < 6000 + kThreads);
        keyFree = keyFree || (size >= 7000 && size < 7000 + kThreads);
      }
      if (e.op == Op::Touch) {
        EXPECT_EQ(sizeOf[e.object], 64 * kKiB);
        EXPECT_LE(e.size, 3 * kPage);
        ASSERT_LT(idx[k] + 1, ev.size());
        EXPECT_EQ(ev[idx[k] + 1].op, Op::Free) << "the Touch is right before the free";
        EXPECT_EQ(ev[idx[k] + 1].object, e.object);
        bigTouched = true;
      }
    }
    EXPECT_GE(worker, 0) << "the thread's own malloc is not on it";
    seenWorkers.insert(worker);
    EXPECT_TRUE(ownFree);
    EXPECT_TRUE(tlsFree) << "the thread_local destructor's free is not before ThreadEnd";
    EXPECT_TRUE(keyFree) << "the key destructor's free is not before ThreadEnd";
    EXPECT_TRUE(bigTouched);
  }
  EXPECT_EQ(workers, kThreads);
  EXPECT_EQ(seenWorkers.size(), static_cast<std::size_t>(kThreads));
}

// Every trace starts with its program chunk: the process, its parent and the program.
// What one call of record_entry_points_program adds to the trace, by the role of the entry
// called: the ops, in order, and for each the index (among them) of the event whose object
// it names (-1: none).
struct RoleEvents {
  std::vector<Op> ops;
  std::vector<int> names;
};
RoleEvents roleEvents(const std::string& role) {
  auto create = [](Op op) { return RoleEvents{{op, Op::Free}, {-1, 0}}; };
  if (role == "malloc") return create(Op::Malloc);
  if (role == "calloc") return create(Op::Calloc);
  if (role == "memalign" || role == "posix_memalign" || role == "aligned_alloc" ||
      role == "valloc" || role == "pvalloc")
    return create(Op::Memalign);
  if (role == "operatorNew" || role == "operatorNewNothrow") return create(Op::New);
  if (role == "realloc" || role == "reallocarray")
    return {{Op::Malloc, Op::Realloc, Op::Free}, {-1, 0, 1}};
  // The object a release is given comes from malloc, or aligned_alloc (a memalign event).
  if (role == "free") return {{Op::Malloc, Op::Free}, {-1, 0}};
  if (role == "operatorDelete") return {{Op::Malloc, Op::Delete}, {-1, 0}};
  if (role == "malloc_usable_size") return {{Op::Malloc, Op::Free}, {-1, 0}};
  if (role == "mallinfo2" || role == "malloc_stats" || role == "malloc_trim") return {};
  ADD_FAILURE() << "record_test does not know the role " << role;
  return {};
}

// Every entry of the shared list (strata/shim/entry_points.hpp) that creates, releases or
// resizes is recorded, one event per call, and those that allocate nothing add no event:
// record_entry_points_program calls each entry once (generated from the list) and says
// which, in order ("ROLE NAME" lines).
TEST(Record, EveryEntryPointOfTheSharedListIsRecorded) {
  TempDir dir;
  const Result r = record(dir, "-o ep.trace -- " + quote(RECORD_ENTRY_POINTS));
  ASSERT_EQ(r.status, 0) << r.err;
  bool complete = false;
  const std::vector<Event> events = readEvents(dir / "ep.trace", &complete);
  EXPECT_TRUE(complete);
  std::size_t a = 0;
  while (a < events.size() && !(events[a].op == Op::Malloc && events[a].size == 5003)) ++a;
  ASSERT_LT(a + 2, events.size()) << "the start marker malloc(5003) is not in the trace";
  a += 2;  // the marker and its free
  std::istringstream lines(r.out);
  std::string role, name;
  std::set<std::string> called;
  while (lines >> role && std::getline(lines >> std::ws, name)) {
    called.insert(name);
    SCOPED_TRACE(name + " (" + role + "), from trace event " + std::to_string(a));
    const RoleEvents want = roleEvents(role);
    std::vector<std::uint64_t> objects;
    for (std::size_t k = 0; k < want.ops.size(); ++k, ++a) {
      ASSERT_LT(a, events.size());
      const Event& e = events[a];
      Op op = want.ops[k];
      if (op == Op::Malloc && e.op == Op::Memalign) op = Op::Memalign;  // from aligned_alloc
      ASSERT_EQ(static_cast<int>(e.op), static_cast<int>(op)) << "event " << k;
      EXPECT_EQ(e.flags & kFlagFailed, 0) << "event " << k;
      if (want.names[k] >= 0) {
        EXPECT_EQ(strata::trace::opCreates(e.op) ? e.target : e.object,
                  objects[static_cast<std::size_t>(want.names[k])])
            << "event " << k << " does not name the object made before it";
      }
      objects.push_back(e.object);
    }
  }
  ASSERT_LT(a, events.size());
  EXPECT_EQ(static_cast<int>(events[a].op), static_cast<int>(Op::Malloc));
  EXPECT_EQ(events[a].size, 5004u) << "more events than the calls account for";
  // The list's recorded entries the old recorder missed, and a query, were called.
  for (const char* n : {"free_sized", "free_aligned_sized", "malloc_usable_size",
                        "operator delete", "reallocarray"})
    EXPECT_NE(called.count(n), 0u) << n;
}

TEST(Record, ProgramChunkNamesTheProcessInParentAndForkChild) {
  TempDir dir;
  const Result r = record(dir, "-o pg.trace -- " + quote(RECORD_FORK));
  ASSERT_EQ(r.status, 0) << r.err;
  const long childPid = std::stol(r.out);
  const TraceFile parent = readTraceFile(dir / "pg.trace");
  const TraceFile child = readTraceFile(dir / ("pg.trace." + std::to_string(childPid)));
  const std::string program = fs::canonical(RECORD_FORK).string();
  EXPECT_EQ(child.program.pid, static_cast<std::uint64_t>(childPid));
  EXPECT_EQ(child.program.parentPid, parent.program.pid);
  EXPECT_NE(parent.program.pid, 0u);
  EXPECT_NE(parent.program.parentPid, 0u);
  EXPECT_NE(parent.program.pid, parent.program.parentPid);
  EXPECT_EQ(std::string(parent.program.path), program);
  EXPECT_EQ(std::string(child.program.path), program);
}

TEST(Record, ProgramChunkAfterExecNamesTheNewProgram) {
  TempDir dir;
  const Result r =
      record(dir, "-o ep.trace -- /bin/sh -c " + quote("exec " + quote(RECORD_CRASH) + " exit3"));
  EXPECT_EQ(r.status, 3) << r.err;
  const TraceFile t = readTraceFile(dir / "ep.trace");
  EXPECT_EQ(std::string(t.program.path), fs::canonical(RECORD_CRASH).string());
  EXPECT_NE(t.program.pid, 0u);
}

#endif  // STRATA_RECORD_PRELOAD_TESTS

}  // namespace
