// mtrace import and export: a real trace made by glibc (libc_malloc_debug.so.0) from a program
// whose allocations are known, checked event for event; traces round-tripped through the text
// format; reap expansion; malformed lines reported with their line number.
#include <sys/wait.h>
#include <unistd.h>

#include <sstream>

#include "support/error.hpp"
#include "common/require.hpp"
#include "tracetools/mtrace.hpp"
#include "test_util.hpp"
#include "tracetools/trace_stats.hpp"
#include "tracetools/workloads.hpp"

namespace {

using namespace tttest;
namespace tt = strata::tracetools;
using strata::trace::kFlagFailed;
using strata::trace::kFlagNull;

// Runs `exe` with LD_PRELOAD and MALLOC_TRACE set for it alone; returns its exit code.
int runTraced(const std::string& exe, const std::string& preload, const std::string& traceFile) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv("LD_PRELOAD", preload.c_str(), 1);
    ::setenv("MALLOC_TRACE", traceFile.c_str(), 1);
    ::execl(exe.c_str(), exe.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Imports mtrace text given inline (named "in.mtrace" in messages).
tt::MtraceImportResult importText(const TempDir& dir, const std::string& text,
                                  std::vector<Event>* events = nullptr) {
  std::istringstream in(text);
  const std::string out = dir / "imported.trace";
  const tt::MtraceImportResult r = tt::importMtrace(in, "in.mtrace", out);
  if (events != nullptr) *events = readEvents(out);
  return r;
}

// The error message importing `text` gives ("" when it imports).
std::string importError(const std::string& text) {
  TempDir dir;
  try {
    importText(dir, text);
  } catch (const strata::support::Error& e) {
    return e.what();
  }
  return "";
}

TEST(Mtrace, ImportsARealGlibcTrace) {
  const std::string preload = STRATA_LIBC_MALLOC_DEBUG;
  if (preload.empty() || !fs::exists(preload))
    STRATA_SKIP_OR_FAIL("libc_malloc_debug.so.0 not found (Debian 12 package: libc6): "
                        "cannot make a real mtrace");
  TempDir dir;
  const std::string text = dir / "prog.mtrace";
  ASSERT_EQ(runTraced(STRATA_MTRACE_PROGRAM, preload, text), 0);
  const std::string written = slurp(text);
  ASSERT_TRUE(contains(written, "= Start")) << written;
  ASSERT_TRUE(contains(written, "@ ")) << "glibc writes callers: " << written;

  const std::string out = dir / "prog.trace";
  const tt::MtraceImportResult r = tt::importMtrace(text, out);
  EXPECT_EQ(r.unknownFrees, 0u);
  EXPECT_EQ(r.unknownReallocs, 0u);
  const std::vector<Event> got = readEvents(out);
  // mtrace_program.c's sequence: calloc, memalign and realloc(NULL, n) all show as '+',
  // realloc(p, 0) as '-', free(NULL) not at all.
  const std::vector<Event> want = {
      ev(Op::Malloc, 10, kNoObject, 0),   // a
      ev(Op::Malloc, 12, kNoObject, 1),   // b = calloc(3, 4)
      ev(Op::Realloc, 100, 0, 2),         // a = realloc(a, 100)
      ev(Op::Malloc, 5, kNoObject, 3),    // c = realloc(NULL, 5)
      ev(Op::Free, 0, kNoObject, 1),      // free(b)
      ev(Op::Free, 0, kNoObject, 3),      // realloc(c, 0)
      ev(Op::Malloc, 30, kNoObject, 4),   // e = memalign(64, 30)
      ev(Op::Free, 0, kNoObject, 4),      // free(e)
      ev(Op::Free, 0, kNoObject, 2),      // free(a)
  };
  ASSERT_EQ(got.size(), want.size()) << written;
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "event " << i << "\n" << written;
}

TEST(Mtrace, ParsesCallersFailuresAndZeroSizes) {
  TempDir dir;
  std::vector<Event> got;
  const tt::MtraceImportResult r = importText(dir,
      "= Start\n"
      "@ ./prog:(main+0x1d)[0x55d0c] + 0x1000 0x10\n"
      "@ /usr/lib/lib c.so:[0x12] + 0x2000 0\n"  // a caller with a space; malloc(0)
      "+ (nil) 0x1000000000\n"                    // failed malloc
      "! 0x1000 0x2000000000\n"                   // failed realloc: 0x1000 stays live
      "- 0x9999\n"                                // never allocated: counted, skipped
      "< 0x1000\n"
      "> 0x3000 0x20\n"
      "- 0x3000\r\n"
      "\n"
      "= End", &got);
  EXPECT_EQ(r.unknownFrees, 1u);
  EXPECT_EQ(r.lines, 11u);
  const std::vector<Event> want = {
      ev(Op::Malloc, 16, kNoObject, 0),
      ev(Op::Malloc, 0, kNoObject, 1),
      ev(Op::Malloc, 0x1000000000, kNoObject, kNoObject, kFlagFailed),
      ev(Op::Realloc, 0x2000000000, 0, kNoObject, kFlagFailed),
      ev(Op::Realloc, 0x20, 0, 2),
      ev(Op::Free, 0, kNoObject, 2),
  };
  EXPECT_EQ(got, want);
}

TEST(Mtrace, MalformedLinesNameFileAndLine) {
  EXPECT_TRUE(contains(importError("= Start\n+ 0x10 0x8\nhello\n"), "in.mtrace:3: malformed mtrace line"));
  EXPECT_TRUE(contains(importError("+ 0x10\n"), "in.mtrace:1: "));
  EXPECT_TRUE(contains(importError("+ 0x10 0x8\n- 0xzz\n"), "in.mtrace:2: malformed mtrace line: bad address"));
  EXPECT_TRUE(contains(importError("+ 0x10 12\n"), "in.mtrace:1: malformed mtrace line: bad size"));
  EXPECT_TRUE(contains(importError("+ 0x10 0x8\n- 0x10 0x8\n"), "in.mtrace:2: "));
  EXPECT_TRUE(contains(importError("> 0x10 0x8\n"), "in.mtrace:1: malformed mtrace line: '>' without"));
  EXPECT_TRUE(contains(importError("+ 0x10 0x8\n< 0x10\n+ 0x20 0x8\n"), "in.mtrace:3: "));
  EXPECT_TRUE(contains(importError("+ 0x10 0x8\n< 0x10\n"), "the file ends after the '<' on line 2"));
  EXPECT_TRUE(contains(importError("@ ./prog:[0x12]\n"), "in.mtrace:1: "));
  EXPECT_TRUE(contains(importError("+ 0x10 0x8\nab\x01\xff\n"), "in.mtrace:2: malformed mtrace line: expected an event (+ - < > !) or '= Start'/'= End': 'ab\\x01\\xff'"))
      << importError("+ 0x10 0x8\nab\x01\xff\n");
  EXPECT_EQ(importError("= Start\n= End\n"), "");
}

TEST(Mtrace, RoundTripKeepsEvents) {
  TempDir dir;
  // Only what mtrace can carry: malloc, realloc, free on thread 0 with no times.
  const std::vector<Event> events = {
      ev(Op::Malloc, 24),                                     // id0
      ev(Op::Malloc, 0),                                      // id1
      ev(Op::Realloc, 4096, 0),                               // id2
      ev(Op::Realloc, 7, kNoObject, kNoObject, kFlagNull),    // id3
      ev(Op::Malloc, 99, kNoObject, kNoObject, kFlagFailed),
      ev(Op::Realloc, 1u << 31, 2, kNoObject, kFlagFailed),   // fails, id2 live
      ev(Op::Free, 0, kNoObject, 1),
      ev(Op::Realloc, 0, 3, kNoObject, kFlagFailed),          // realloc(id3, 0) frees it
      ev(Op::Realloc, 16, 2),                                 // id4
      ev(Op::Free, 0, kNoObject, 4),
  };
  const std::string trace = dir / "a.trace", text = dir / "a.mtrace", back = dir / "b.trace";
  writeFile(trace, encode(events));
  const tt::MtraceExportResult ex = tt::exportMtrace(trace, text);
  EXPECT_EQ(ex.events, events.size());
  const tt::MtraceImportResult im = tt::importMtrace(text, back);
  EXPECT_EQ(im.unknownFrees, 0u);
  const std::vector<Event> original = readEvents(trace);
  const std::vector<Event> again = readEvents(back);
  // As glibc writes them, realloc(NULL, n) comes back as a malloc and realloc(p, 0) as the
  // free it was.
  std::vector<Event> expected = original;
  expected[3] = ev(Op::Malloc, 7, kNoObject, 3);
  expected[7] = ev(Op::Free, 0, kNoObject, 3);
  EXPECT_EQ(again, expected) << slurp(text);
}

TEST(Mtrace, WorkloadRoundTripKeepsTheFigures) {
  TempDir dir;
  const std::string trace = dir / "s.trace", text = dir / "s.mtrace", back = dir / "b.trace";
  tt::generateWorkload("server", 5, 0.02, trace);
  tt::exportMtrace(trace, text);
  tt::importMtrace(text, back);
  const tt::TraceStats a = tt::computeStats(trace), b = tt::computeStats(back);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.totalObjects, b.totalObjects);
  EXPECT_EQ(a.totalBytes, b.totalBytes);
  EXPECT_EQ(a.peakLiveBytes, b.peakLiveBytes);
  EXPECT_EQ(a.maxLiveObjects, b.maxLiveObjects);
  EXPECT_EQ(a.neverFreed, b.neverFreed);
  EXPECT_EQ(a.lifetimeBytes.counts, b.lifetimeBytes.counts);
  EXPECT_EQ(b.threads, 1u);  // mtrace has no threads
}

TEST(Mtrace, ExportExpandsReapsAndAlignsAddresses) {
  TempDir dir;
  strata::trace::Event aligned = ev(Op::Memalign, 10);
  aligned.flags = strata::trace::kFlagAligned;
  aligned.alignLog2 = 12;
  const std::vector<Event> events = {
      ev(Op::ReapCreate, 0, kNoObject, kNoObject, kFlagNull),  // id0
      ev(Op::ReapMalloc, 10, 0),                               // id1
      ev(Op::ReapCreate, 0, 0),                                // id2 under id0
      ev(Op::ReapMalloc, 20, 2),                               // id3
      ev(Op::ReapFree, 0, 2, 3),                               // '-' id3
      ev(Op::ReapMalloc, 30, 2),                               // id4
      aligned,                                                 // id5
      ev(Op::ReapDestroy, 0, 0),                               // '-' id1, id4
  };
  const std::string trace = dir / "r.trace", text = dir / "r.mtrace", back = dir / "b.trace";
  writeFile(trace, encode(events));
  EXPECT_EQ(tt::exportMtrace(trace, text).lines, 7u);  // 4 '+' and 3 '-'
  const std::string t = slurp(text);
  std::size_t plus = 0, minus = 0;
  std::istringstream in(t);
  std::uint64_t alignedAddr = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("+ ")) ++plus;
    if (line.starts_with("- ")) ++minus;
    if (line.ends_with(" 0xa") && plus == 4) alignedAddr = std::stoull(line.substr(2), nullptr, 16);
  }
  EXPECT_EQ(plus, 4u);
  EXPECT_EQ(minus, 3u);
  EXPECT_NE(alignedAddr, 0u);
  EXPECT_EQ(alignedAddr % 4096, 0u) << t;
  // Imported back: the reap objects are freed, the aligned one is still live.
  const tt::MtraceImportResult im = tt::importMtrace(text, back);
  EXPECT_EQ(im.unknownFrees, 0u);
  EXPECT_EQ(tt::computeStats(back).neverFreed, 1u);
}

// The export keeps only the live ids' addresses: an object freed twice is written freed once,
// a realloc of a freed object as realloc(NULL, n).
TEST(Mtrace, ExportOfAnObjectAlreadyFreed) {
  TempDir dir;
  const std::vector<Event> events = {
      ev(Op::Malloc, 16),                 // id0
      ev(Op::Free, 0, kNoObject, 0),      // '-'
      ev(Op::Free, 0, kNoObject, 0),      // nothing
      ev(Op::Realloc, 32, 0),             // id1: '+'
      ev(Op::Realloc, 0, 0, kNoObject, kFlagFailed),  // realloc(freed, 0): nothing
  };
  const std::string trace = dir / "f.trace", text = dir / "f.mtrace";
  writeFile(trace, encode(events));
  EXPECT_EQ(tt::exportMtrace(trace, text).lines, 3u);
  const std::string t = slurp(text);
  EXPECT_EQ(t, "= Start\n+ 0x10000000 0x10\n- 0x10000000\n+ 0x10000020 0x20\n= End\n");
}

// A reap whose objects are freed one by one, thousands of them, then destroyed: its list of
// members drops the freed ones as it goes, and the destroy frees exactly those still live.
TEST(Mtrace, ExportOfALongLivedReap) {
  TempDir dir;
  std::vector<Event> events = {ev(Op::ReapCreate, 0, kNoObject, kNoObject, kFlagNull)};  // id0
  std::uint64_t next = 1;
  for (int i = 0; i < 5000; ++i) {
    events.push_back(ev(Op::ReapMalloc, 8, 0));  // id next
    if (i % 10 != 0) events.push_back(ev(Op::ReapFree, 0, 0, next));
    ++next;
  }
  events.push_back(ev(Op::ReapDestroy, 0, 0));
  const std::string trace = dir / "l.trace", text = dir / "l.mtrace", back = dir / "b.trace";
  writeFile(trace, encode(events));
  EXPECT_EQ(tt::exportMtrace(trace, text).lines, 5000u + 5000u);  // every '+', every '-'
  const tt::MtraceImportResult im = tt::importMtrace(text, back);
  EXPECT_EQ(im.unknownFrees, 0u);
  EXPECT_EQ(tt::computeStats(back).neverFreed, 0u);
  const tt::TraceStats st = tt::computeStats(trace);
  EXPECT_EQ(st.neverFreed, 0u);
  EXPECT_EQ(st.badFrees, 0u);
}

TEST(Mtrace, ExportOfACorruptTraceNamesTheByteOffset) {
  TempDir dir;
  const std::string trace = dir / "bad.trace";
  std::vector<unsigned char> bytes = encode({ev(Op::Malloc, 8)});
  bytes[8] = 9;  // version 9
  writeFile(trace, bytes);
  try {
    tt::exportMtrace(trace, dir / "out.mtrace");
    FAIL() << "no error";
  } catch (const strata::support::Error& e) {
    EXPECT_TRUE(contains(e.what(), trace + ": unsupported format version at byte offset 8")) << e.what();
  }
  EXPECT_THROW(tt::importMtrace(dir / "missing.mtrace", dir / "x.trace"), strata::support::Error);
}

}  // namespace
