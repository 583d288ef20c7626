#include "strata/utility/trace_heap.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "strata/general/kingsley_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/mmap_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/utility/ansi_wrapper.hpp"
#include "common/differential.hpp"

using namespace strata;

static_assert(Heap<TraceHeap<MallocHeap>> && SizedHeap<TraceHeap<MallocHeap>>);
static_assert(ClearableHeap<TraceHeap<SbrkHeap<>>> && !ClearableHeap<TraceHeap<MallocHeap>>);

namespace {

std::string hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIxPTR, reinterpret_cast<std::uintptr_t>(p));
  return buf;
}

std::vector<std::string> linesOf(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::vector<std::string> lines;
  std::string line;
  for (int c; (c = std::fgetc(f)) != EOF;) {
    if (c == '\n') {
      lines.push_back(line);
      line.clear();
    } else {
      line += static_cast<char>(c);
    }
  }
  EXPECT_TRUE(line.empty()) << "the trace ends in a partial line: " << line;
  return lines;
}

long fileSize(std::FILE* f) {
  struct stat st;
  ::fstat(fileno(f), &st);
  return static_cast<long>(st.st_size);
}

}  // namespace

TEST(TraceHeap, ScriptedSequenceLineByLine) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  void *a, *b;
  {
    TraceHeap<MallocHeap> h(f);
    a = h.malloc(24);
    b = h.malloc(100);
    h.free(a);
    h.free(nullptr);
    EXPECT_EQ(h.malloc(SIZE_MAX), nullptr);
    h.free(b);
    EXPECT_EQ(h.mallocsTraced(), 3u);
    EXPECT_TRUE(h.ok());
  }
  const std::vector<std::string> expected = {
      "m 0 24 " + hex(a),
      "m 1 100 " + hex(b),
      "f " + hex(a),
      "m 2 18446744073709551615 0x0",
      "f " + hex(b),
  };
  EXPECT_EQ(linesOf(f), expected);
  std::fclose(f);
}

TEST(TraceHeap, BuffersUntilFlushOrDestruction) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    TraceHeap<MallocHeap> h(fileno(f));  // the file-descriptor sink
    h.free(h.malloc(8));
    EXPECT_EQ(fileSize(f), 0);  // still in the buffer
    h.flush();
    EXPECT_GT(fileSize(f), 0);
    h.free(h.malloc(16));
  }
  const std::vector<std::string> lines = linesOf(f);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].rfind("m 0 8 0x", 0), 0u);
  EXPECT_EQ(lines[2].rfind("m 1 16 0x", 0), 0u);
  EXPECT_EQ(lines[3].rfind("f 0x", 0), 0u);
  std::fclose(f);
}

TEST(TraceHeap, SmallBufferFlushesAsItFills) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  std::vector<void*> ptrs;
  {
    TraceHeap<MallocHeap, 256> h(f);
    for (int i = 0; i < 500; ++i) ptrs.push_back(h.malloc(static_cast<std::size_t>(i) + 1));
    EXPECT_GT(fileSize(f), 0);
    for (void* p : ptrs) h.free(p);
  }
  const std::vector<std::string> lines = linesOf(f);
  ASSERT_EQ(lines.size(), 1000u);
  for (std::size_t i = 0; i < 500; ++i) {
    EXPECT_EQ(lines[i], "m " + std::to_string(i) + " " + std::to_string(i + 1) + " " + hex(ptrs[i]));
    EXPECT_EQ(lines[500 + i], "f " + hex(ptrs[i]));
  }
  std::fclose(f);
}

TEST(TraceHeap, ClearIsTraced) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    TraceHeap<SbrkHeap<>> h(f);
    void* p = h.malloc(32);
    h.clear();
    EXPECT_EQ(h.malloc(32), p);  // the parent really was cleared
  }
  const std::vector<std::string> lines = linesOf(f);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "c");
  std::fclose(f);
}

TEST(TraceHeap, AFailedWriteStopsTheTraceNotTheHeap) {
  TraceHeap<MallocHeap, 256> h(-1);
  for (int i = 0; i < 100; ++i) {
    void* p = h.malloc(40);
    ASSERT_NE(p, nullptr);
    h.free(p);
  }
  EXPECT_FALSE(h.ok());
}

TEST(TraceHeap, FlushKeepsErrno) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    TraceHeap<MallocHeap, 128> h(f);
    for (int i = 0; i < 10; ++i) h.free(h.malloc(8));
    errno = 0;
    for (int i = 0; i < 10; ++i) {  // some of these flush
      EXPECT_EQ(h.malloc(SIZE_MAX), nullptr);
      EXPECT_EQ(errno, ENOMEM);
    }
  }
  EXPECT_EQ(linesOf(f).size(), 30u);
  std::fclose(f);
}

// Replays a whole differential run's trace: every free names a live object, ids count up,
// and at the end nothing is live.
TEST(TraceHeap, DifferentialTraceReplaysConsistently) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  const std::size_t before = processAccount().held();
  test::DiffStats stats;
  {
    ANSIWrapper<TraceHeap<KingsleyHeap<MmapHeap>>> h(f);
    stats = test::runDifferential(h, {.seed = 31, .ops = 200'000, .zeroSizes = true});
  }
  EXPECT_EQ(processAccount().held(), before);

  std::set<std::string> live;
  std::uint64_t nextId = 0;
  std::size_t mallocs = 0, frees = 0;
  for (const std::string& line : linesOf(f)) {
    std::istringstream in(line);
    std::string op, ptr;
    in >> op;
    if (op == "m") {
      std::uint64_t id;
      std::size_t size;
      in >> id >> size >> ptr;
      ASSERT_EQ(id, nextId++) << line;
      ASSERT_NE(ptr, "0x0") << line;
      ASSERT_TRUE(live.insert(ptr).second) << "handed out twice: " << line;
      ++mallocs;
    } else {
      ASSERT_EQ(op, "f") << line;
      in >> ptr;
      ASSERT_EQ(live.erase(ptr), 1u) << "free of an object not live: " << line;
      ++frees;
    }
    ASSERT_TRUE(in && in.peek() == EOF) << "malformed: " << line;
  }
  EXPECT_TRUE(live.empty());
  EXPECT_EQ(mallocs, frees);
  EXPECT_GE(mallocs, stats.mallocs);  // realloc adds its own
  std::fclose(f);
}
