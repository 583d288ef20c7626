// computeStats on hand-built traces whose figures are worked out by hand in the comments:
// live peaks, object counts, both lifetime clocks, histograms, realloc, failed calls, and
// reap_clear / reap_destroy freeing the objects of nested reaps.

#include "support/error.hpp"
#include "test_util.hpp"
#include "tracetools/trace_stats.hpp"

namespace {

using namespace tttest;
namespace tt = strata::tracetools;
using strata::trace::kFlagFailed;
using strata::trace::kFlagNull;

// Writes the events to a file in `dir` and computes their statistics.
tt::TraceStats statsOf(const TempDir& dir, const std::vector<Event>& events, bool trailer = true) {
  const std::string path = dir / "t.trace";
  writeFile(path, encode(events, trailer));
  return tt::computeStats(path);
}

std::size_t op(Op o) { return static_cast<std::size_t>(o); }

TEST(TraceStats, MallocReallocFreeFiguresAndHistograms) {
  TempDir dir;
  // id0 = malloc 100, id1 = malloc 200, free id0, id2 = malloc 50, id3 = realloc(id1, 300),
  // free id2, free id3; times 0, 10, ... 60; the realloc and the last free on thread 2.
  const tt::TraceStats s = statsOf(dir, {
      ev(Op::Malloc, 100, kNoObject, kNoObject, 0, 0, 0),
      ev(Op::Malloc, 200, kNoObject, kNoObject, 0, 0, 10),
      ev(Op::Free, 0, kNoObject, 0, 0, 0, 20),
      ev(Op::Malloc, 50, kNoObject, kNoObject, 0, 0, 30),
      ev(Op::Realloc, 300, 1, kNoObject, 0, 2, 40),
      ev(Op::Free, 0, kNoObject, 2, 0, 0, 50),
      ev(Op::Free, 0, kNoObject, 3, 0, 2, 60),
  });
  EXPECT_EQ(s.events, 7u);
  EXPECT_EQ(s.threads, 2u);  // threads 0 and 2
  EXPECT_EQ(s.totalObjects, 4u);
  EXPECT_EQ(s.totalBytes, 650u);
  // Live: 100, 300, 200, 250, 350 (realloc: 200 dies, 300 born), 300, 0.
  EXPECT_EQ(s.peakLiveBytes, 350u);
  EXPECT_EQ(s.maxLiveObjects, 2u);
  EXPECT_DOUBLE_EQ(s.averageObjectSize, 162.5);
  EXPECT_DOUBLE_EQ(s.totalOverPeak, 650.0 / 350.0);
  EXPECT_EQ(s.neverFreed, 0u);
  EXPECT_EQ(s.failedAllocations, 0u);
  EXPECT_EQ(s.durationNs, 60u);
  EXPECT_TRUE(s.complete);
  EXPECT_EQ(s.opCounts[op(Op::Malloc)], 3u);
  EXPECT_EQ(s.opCounts[op(Op::Realloc)], 1u);
  EXPECT_EQ(s.opCounts[op(Op::Free)], 3u);
  // Sizes 100, 200, 50, 300 -> buckets 6, 7, 5, 8.
  EXPECT_EQ(s.sizes.counts, (std::vector<std::uint64_t>{0, 0, 0, 0, 0, 1, 1, 1, 1}));
  // Bytes allocated between birth and death: id0 100->300 = 200 (bucket 7); id1 300->350 = 50
  // (5: its death comes before the realloc's new bytes); id2 350->650 = 300 (8); id3 0 (0).
  EXPECT_EQ(s.lifetimeBytes.counts, (std::vector<std::uint64_t>{1, 0, 0, 0, 0, 1, 0, 1, 1}));
  // Nanoseconds: 20, 30, 20, 20 -> all bucket 4.
  EXPECT_EQ(s.lifetimeNs.counts, (std::vector<std::uint64_t>{0, 0, 0, 0, 4}));
}

TEST(TraceStats, FailedNullAndBadFrees) {
  TempDir dir;
  const tt::TraceStats s = statsOf(dir, {
      ev(Op::Malloc, 1u << 30, kNoObject, kNoObject, kFlagFailed),  // no object
      ev(Op::Realloc, 64, kNoObject, kNoObject, kFlagNull),         // id0 = realloc(NULL, 64)
      ev(Op::Calloc, 32),                                           // id1
      ev(Op::Realloc, 0, 0, kNoObject, kFlagFailed),                // realloc(id0, 0) frees id0
      ev(Op::Realloc, 1u << 30, 1, kNoObject, kFlagFailed),         // fails, id1 stays live
      ev(Op::Free, 0, kNoObject, kNoObject, kFlagNull),             // free(NULL)
      ev(Op::Free, 0, kNoObject, 0),                                // id0 again: a bad free
      ev(Op::New, 16),                                              // id2, never freed
  });
  EXPECT_EQ(s.totalObjects, 3u);
  EXPECT_EQ(s.totalBytes, 112u);
  EXPECT_EQ(s.failedAllocations, 3u);  // the malloc and both failed reallocs
  EXPECT_EQ(s.badFrees, 1u);
  EXPECT_EQ(s.peakLiveBytes, 96u);     // 64 + 32
  EXPECT_EQ(s.neverFreed, 2u);         // id1 and id2
  EXPECT_EQ(s.lifetimeBytes.counts.size(), 6u);  // id0: 96 - 64 = 32 bytes (bucket 5)
  EXPECT_EQ(s.lifetimeBytes.counts[5], 1u);
}

TEST(TraceStats, ReapClearAndDestroyFreeNestedReaps) {
  TempDir dir;
  const tt::TraceStats s = statsOf(dir, {
      ev(Op::ReapCreate, 0, kNoObject, kNoObject, kFlagNull),  // id0: top-level reap R
      ev(Op::ReapMalloc, 10, 0),                               // id1 in R
      ev(Op::ReapCreate, 0, 0),                                // id2: reap C under R
      ev(Op::ReapMalloc, 20, 2),                               // id3 in C
      ev(Op::ReapCreate, 0, 2),                                // id4: reap G under C
      ev(Op::ReapMalloc, 40, 4),                               // id5 in G
      ev(Op::ReapMalloc, 80, 2),                               // id6 in C
      ev(Op::ReapFree, 0, 2, 6),                               // id6 freed on its own
      ev(Op::Malloc, 1000),                                    // id7, not in a reap
      ev(Op::ReapClear, 0, 0),                                 // frees id1, id3, id5; C, G gone
      ev(Op::ReapMalloc, 5, 0),                                // id8 in R (still there)
      ev(Op::ReapDestroy, 0, 0),                               // frees id8
  });
  EXPECT_EQ(s.reaps, 3u);
  EXPECT_EQ(s.totalObjects, 6u);  // ids 1, 3, 5, 6, 7, 8
  EXPECT_EQ(s.totalBytes, 1155u);
  // Live: 10, 30, 70, 150, 70, 1070 (peak), clear -> 1000, 1005, destroy -> 1000.
  EXPECT_EQ(s.peakLiveBytes, 1070u);
  EXPECT_EQ(s.maxLiveObjects, 4u);  // ids 1, 3, 5, 6
  EXPECT_EQ(s.neverFreed, 1u);      // id7
  EXPECT_EQ(s.badFrees, 0u);
  std::uint64_t freed = 0;
  for (const std::uint64_t c : s.lifetimeBytes.counts) freed += c;
  EXPECT_EQ(freed, 5u);  // ids 1, 3, 5, 6, 8
  EXPECT_EQ(s.opCounts[op(Op::ReapCreate)], 3u);
  EXPECT_EQ(s.opCounts[op(Op::ReapMalloc)], 5u);
}

TEST(TraceStats, ClearedChildReapObjectsAreNotFreedTwice) {
  TempDir dir;
  // An object freed by clearing its reap, then named again by reap_free: a bad free, and
  // live bytes must not go negative.
  const tt::TraceStats s = statsOf(dir, {
      ev(Op::ReapCreate, 0, kNoObject, kNoObject, kFlagNull),  // id0
      ev(Op::ReapMalloc, 64, 0),                               // id1
      ev(Op::ReapClear, 0, 0),
      ev(Op::ReapFree, 0, 0, 1),
      ev(Op::Malloc, 8),
  });
  EXPECT_EQ(s.badFrees, 1u);
  EXPECT_EQ(s.peakLiveBytes, 64u);
  EXPECT_EQ(s.neverFreed, 1u);
}

TEST(TraceStats, CountsDistinctThreadsEvenWithHugeIndices) {
  TempDir dir;
  const tt::TraceStats s = statsOf(dir, {
      ev(Op::Malloc, 8, kNoObject, kNoObject, 0, 4'000'000'000u),
      ev(Op::Malloc, 8, kNoObject, kNoObject, 0, 3),
      ev(Op::Free, 0, kNoObject, 0, 0, 4'000'000'000u),
      ev(Op::Free, 0, kNoObject, 1, 0, 70'000),
  });
  EXPECT_EQ(s.threads, 3u);
}

TEST(TraceStats, TraceWithoutTrailerIsIncompleteButCounted) {
  TempDir dir;
  const tt::TraceStats s = statsOf(dir, {ev(Op::Malloc, 8), ev(Op::Malloc, 8)}, false);
  EXPECT_FALSE(s.complete);
  EXPECT_EQ(s.totalObjects, 2u);
}

TEST(TraceStats, CorruptTraceNamesFileAndByteOffset) {
  TempDir dir;
  const std::string path = dir / "bad.trace";
  std::vector<unsigned char> bytes = encode({ev(Op::Malloc, 8), ev(Op::Free, 0, kNoObject, 0)});
  bytes[16 + 16 + 1] ^= 0x40;  // a payload byte of the first chunk: CRC mismatch at offset 16
  writeFile(path, bytes);
  try {
    tt::computeStats(path);
    FAIL() << "no error for a corrupt trace";
  } catch (const strata::support::Error& e) {
    EXPECT_TRUE(contains(e.what(), path + ": ")) << e.what();
    EXPECT_TRUE(contains(e.what(), "CRC mismatch at byte offset 16")) << e.what();
  }
  EXPECT_THROW(tt::computeStats(dir / "missing.trace"), strata::support::Error);
}

TEST(TraceStats, BucketLabels) {
  EXPECT_EQ(tt::bucketLabel(0, tt::HistogramUnit::Bytes), "0-1 B");
  EXPECT_EQ(tt::bucketLabel(6, tt::HistogramUnit::Bytes), "64-127 B");
  EXPECT_EQ(tt::bucketLabel(10, tt::HistogramUnit::Bytes), "1-2 KiB");
  EXPECT_EQ(tt::bucketLabel(13, tt::HistogramUnit::Bytes), "8-16 KiB");
  EXPECT_EQ(tt::bucketLabel(20, tt::HistogramUnit::Bytes), "1-2 MiB");
  EXPECT_EQ(tt::bucketLabel(9, tt::HistogramUnit::Nanoseconds), "512-1023 ns");
  EXPECT_EQ(tt::bucketLabel(10, tt::HistogramUnit::Nanoseconds), "1.02-2.05 us");
  EXPECT_EQ(tt::opName(Op::ReapDestroy), "reap_destroy");
}

TEST(TraceStats, JsonHasEveryFigure) {
  TempDir dir;
  const tt::TraceStats s = statsOf(dir, {ev(Op::Malloc, 100), ev(Op::Malloc, 3)});
  const std::string j = tt::toJson(s);
  EXPECT_EQ(j.front(), '{');
  EXPECT_EQ(j.substr(j.size() - 2), "}\n");
  for (const char* key : {"\"total_objects\": 2", "\"peak_live_bytes\": 103",
                          "\"max_live_objects\": 2", "\"malloc\": 2,",
                          "\"size_histogram_log2\": [0, 1, 0, 0, 0, 0, 1]", "\"complete\": true",
                          "\"average_object_size\": 51.5"})
    EXPECT_TRUE(contains(j, key)) << key << " not in " << j;
}

}  // namespace

namespace {

TEST(TraceStats, TouchAndThreadEventsOfFormatTwo) {
  TempDir dir;
  // id0 = calloc 1 MiB touched 8 KiB, id1 = malloc 64 KiB touched whole; thread 1 started by
  // thread 0 and ended; a touch of a freed object counts nothing.
  const tt::TraceStats s = statsOf(dir, {
      ev(Op::Calloc, 1 << 20),
      ev(Op::ThreadStart, 0, 0, kNoObject, 0, 1),
      ev(Op::Malloc, 65536, kNoObject, kNoObject, 0, 1),
      ev(Op::Touch, 8192, kNoObject, 0),
      ev(Op::Free, 0, kNoObject, 0),
      ev(Op::Touch, 65536, kNoObject, 1, 0, 1),
      ev(Op::Free, 0, kNoObject, 1, 0, 1),
      ev(Op::Touch, 4096, kNoObject, 1, 0, 1),
      ev(Op::ThreadEnd, 0, kNoObject, kNoObject, 0, 1),
  });
  EXPECT_EQ(s.totalObjects, 2u);
  EXPECT_EQ(s.peakLiveBytes, (1u << 20) + 65536u);
  EXPECT_EQ(s.touchedObjects, 2u);
  EXPECT_EQ(s.touchedObjectBytes, (1u << 20) + 65536u);
  EXPECT_EQ(s.touchedBytes, 8192u + 65536u);
  EXPECT_EQ(s.opCounts[op(Op::ThreadStart)], 1u);
  EXPECT_EQ(s.opCounts[op(Op::ThreadEnd)], 1u);
  EXPECT_EQ(s.opCounts[op(Op::Touch)], 3u);
  EXPECT_EQ(s.threads, 2u);
  EXPECT_EQ(s.formatVersion, strata::trace::kPlainFormatVersion);  // a writer without compression
  EXPECT_EQ(s.pid, 0u) << "no program chunk in this trace";
  const std::string json = tt::toJson(s);
  EXPECT_NE(json.find("\"touched_bytes\": 73728"), std::string::npos) << json;
  EXPECT_NE(json.find("\"thread_start\": 1"), std::string::npos) << json;
  EXPECT_NE(json.find("\"program\": \"\""), std::string::npos) << json;
}

}  // namespace
