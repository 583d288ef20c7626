// `strata record` end to end: runs the built `strata` executable on the programs beside this
// file (see tests.cmake) and reads the traces back with TraceReader, checking them event for
// event: op, flags, size, alignment, object and target ids, thread. Also fork (two traces,
// the child's self-contained), every entry point of the shared list, threads' starts and ends,
// the program chunk, and bad usage. How a program ends is record_exit_test.cpp's; what it
// touched, record_touched_pages_test.cpp's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "record_run.hpp"

namespace {

using strata::trace::Event;
using strata::trace::kFlagAligned;
using strata::trace::kFlagFailed;
using strata::trace::kFlagNull;
using strata::trace::kNoObject;
using strata::trace::Op;
namespace fs = std::filesystem;

using strata::test::TempDir;
using namespace strata::test::record;

// A command line `strata record` refuses, or a run it cannot start: its exit status, and what
// it says on stderr. {dir} in env and args is the test's directory.
struct UsageCase {
  std::string name;
  std::string env;   // VAR=value words before `strata record`
  std::string args;  // after it
  int status;
  std::vector<std::string> err;  // each in stderr
};

const UsageCase kUsageCases[] = {
    {"NoArguments", "", "", 2, {"missing '--' and the COMMAND", "usage: strata record"}},
    {"OutputOptionWithoutFile", "", "-o", 2, {"-o needs a FILE"}},
    {"UnknownOption", "", "--frobnicate -- true", 2, {"unknown option '--frobnicate'"}},
    {"CommandWithoutDoubleDash", "", "true", 2, {"missing '--' before the command 'true'"}},
    {"BadClock", "", "--clock slow -- true", 2, {"--clock takes tsc, fine or coarse"}},
    {"DoubleDashWithoutCommand", "", "-o x.trace --", 2, {"missing the COMMAND"}},
    {"BadTouchMin", "", "--touch-min 12q -- true", 2, {"--touch-min takes a size"}},
    // The message says which target builds the recorder, and what it is called.
    {"RecorderLibraryMissing", "STRATA_LIB_DIR={dir}/nolib", "-- true", 2,
     {"strata_toolkit", "libstrata-record.so"}},
    {"OutputNotWritable", "", "-o {dir}/no/such/dir/x.trace -- true", 1, {"cannot write"}},
    {"CommandNotFound", "", "-o x.trace -- {dir}/no-such-program", 127, {"command not found"}},
};

// GoogleTest prints a case by its name.
void PrintTo(const UsageCase& c, std::ostream* os) { *os << c.name; }

// `words` with each {dir} replaced by dir, quoted.
std::string inDir(std::string words, const TempDir& dir) {
  const std::string key = "{dir}", path = quote(dir.path().string());
  for (std::size_t at; (at = words.find(key)) != std::string::npos;)
    words.replace(at, key.size(), path);
  return words;
}

class RecordUsage : public testing::TestWithParam<UsageCase> {};

TEST_P(RecordUsage, IsRefusedAndSaysWhy) {
  const UsageCase& c = GetParam();
  TempDir dir;
  const std::string env = c.env.empty() ? "" : inDir(c.env, dir) + " ";
  const Result r = run(dir, env + quote(kStrata) + " record " + inDir(c.args, dir));
  EXPECT_EQ(r.status, c.status) << r.err;
  for (const std::string& say : c.err) {
    EXPECT_NE(r.err.find(say), std::string::npos) << "no '" << say << "' in: " << r.err;
  }
}

INSTANTIATE_TEST_SUITE_P(Refused, RecordUsage, testing::ValuesIn(kUsageCases), CaseName{});

#ifdef STRATA_RECORD_PRELOAD_TESTS

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

// Every trace starts with its program chunk: the process, its parent and the program.
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

#endif  // STRATA_RECORD_PRELOAD_TESTS

}  // namespace
