// Tests for the allocation trace format (toolkit/trace/include/strata/trace/*.hpp, docs/toolkit/trace-format.md):
// round trips, encoding size, chunking, streaming through a pipe, and that no input, however
// truncated or corrupt, makes the reader crash or accept it silently.
// links: strata_trace
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "strata/trace/format.hpp"
#include "strata/trace/reader.hpp"
#include "strata/trace/writer.hpp"
#include "toolkit/trace/counting_new.hpp"
#include "toolkit/trace/trace_test_events.hpp"

namespace {

using namespace strata::trace;
using namespace strata::trace::testing;

TEST(TraceFormat, Crc32MatchesTheStandardCheckValue) {
  const char* s = "123456789";
  EXPECT_EQ(crc32(reinterpret_cast<const unsigned char*>(s), 9), 0xCBF43926u);
  EXPECT_EQ(crc32(nullptr, 0), 0u);
}

TEST(TraceFormat, VarintsRoundTripAndRejectOverlongInput) {
  const std::uint64_t values[] = {0, 1, 127, 128, 16383, 16384, (1ull << 32) - 1, 1ull << 63,
                                  ~0ull};
  for (std::uint64_t v : values) {
    unsigned char buf[10];
    unsigned char* end = putVarint(buf, v);
    std::uint64_t got = 0;
    ASSERT_EQ(getVarint(buf, end, got), end);
    EXPECT_EQ(got, v);
    EXPECT_EQ(getVarint(buf, end - 1, got), nullptr) << "cut short";
    EXPECT_EQ(unzigzag(zigzag(v)), v);
  }
  unsigned char eleven[11];
  std::fill(eleven, eleven + 10, 0x80);
  eleven[10] = 0;
  std::uint64_t got;
  EXPECT_EQ(getVarint(eleven, eleven + 11, got), nullptr);
  unsigned char over[10];
  std::fill(over, over + 9, 0xff);
  over[9] = 0x02;  // bit 64
  EXPECT_EQ(getVarint(over, over + 10, got), nullptr);
  EXPECT_EQ(zigzag(static_cast<std::uint64_t>(-1)), 1u);
}

TEST(TraceFormat, OneMillionRandomEventsRoundTripAcrossChunksAndThreads) {
  Written w = writeTrace(1'000'000, 64 * 1024, 1, 64, false);
  EXPECT_GT(w.chunks, 50u);
  std::vector<Event> back;
  bool complete = false;
  ASSERT_EQ(readAll(w.bytes, back, nullptr, &complete), ReadStatus::End);
  EXPECT_TRUE(complete);
  ASSERT_EQ(back.size(), w.events.size());
  for (std::size_t i = 0; i < back.size(); ++i) ASSERT_EQ(back[i], w.events[i]) << "event " << i;
  std::printf("random events: %.2f bytes/event, %llu chunks\n",
              double(w.bytes.size()) / double(w.events.size()),
              static_cast<unsigned long long>(w.chunks));
}

// The recorder's trusted appendUnchecked() writes the very bytes append() writes for the same
// valid events, and returns the same ids.
TEST(TraceWriter, AppendUncheckedWritesWhatAppendWrites) {
  for (bool realistic : {false, true}) {
    SCOPED_TRACE(realistic ? "realistic" : "random");
    Bytes checked, unchecked;
    std::vector<unsigned char> b1(4096), b2(4096);
    TraceWriter w1(b1.data(), b1.size(), VectorSink{&checked, nullptr});
    TraceWriter w2(b2.data(), b2.size(), VectorSink{&unchecked, nullptr});
    EventSource src(7, 8, realistic);
    for (int i = 0; i < 100000; ++i) {
      const Event e = src.make();
      const std::uint64_t id1 = w1.append(e);
      ASSERT_NE(id1, decltype(w1)::kRejected) << "event " << i;
      const std::uint64_t id2 = w2.appendUnchecked(e.op, e.flags, e.thread, e.timeNs, e.object,
                                                   e.target, e.size, e.alignLog2);
      ASSERT_EQ(id1, id2) << "event " << i;
      src.record(e, id1);
    }
    ASSERT_TRUE(w1.finish());
    ASSERT_TRUE(w2.finish());
    EXPECT_GT(w1.chunks(), 10u);
    EXPECT_TRUE(checked == unchecked);
  }
}

TEST(TraceFormat, RealisticMixIsCompact) {
  Written w = writeTrace(1'000'000, 256 * 1024, 2, 8, true);
  std::vector<Event> back;
  ASSERT_EQ(readAll(w.bytes, back), ReadStatus::End);
  ASSERT_EQ(back, w.events);
  const double perEvent = double(w.bytes.size()) / double(w.events.size());
  std::printf("realistic mix: %.2f bytes/event\n", perEvent);
  EXPECT_LT(perEvent, 6.0);
  TraceReader reader(MemorySource{w.bytes.data(), w.bytes.size()});
  Event e;
  while (reader.next(e) == ReadStatus::Event) {
  }
  ASSERT_TRUE(reader.complete());
  EXPECT_EQ(reader.totals().events, 1'000'000u);
  EXPECT_EQ(reader.totals().threads, 8u);
  EXPECT_EQ(reader.totals().objects, reader.objects());
}

TEST(TraceFormat, SmallWriterBufferForcesManyChunks) {
  Written w = writeTrace(20'000, kMinWriterBuffer, 3, 5, true);
  EXPECT_GT(w.chunks, 1000u);
  for (std::size_t i = 1; i < w.boundaries.size(); ++i)
    EXPECT_LE(w.boundaries[i] - w.boundaries[i - 1], kMinWriterBuffer);
  std::vector<Event> back;
  ASSERT_EQ(readAll(w.bytes, back), ReadStatus::End);
  EXPECT_EQ(back, w.events);
}

TEST(TraceFormat, StreamsThroughAPipe) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::vector<Event> expected;
  std::thread producer([&] {
    std::vector<unsigned char> buffer(4096);
    auto sink = [fd = fds[1]](const unsigned char* d, std::size_t n) {
      while (n != 0) {
        const ssize_t k = write(fd, d, n);
        if (k <= 0) return false;
        d += k;
        n -= static_cast<std::size_t>(k);
      }
      return true;
    };
    TraceWriter writer(buffer.data(), buffer.size(), sink);
    EventSource src(4, 16, true);
    for (int i = 0; i < 300'000; ++i) {
      const Event e = src.make();
      expected.push_back(src.record(e, writer.append(e)));
    }
    writer.finish();
    close(fds[1]);
  });
  std::size_t reads = 0;
  auto source = [fd = fds[0], &reads](unsigned char* out, std::size_t n) -> std::ptrdiff_t {
    ++reads;
    return read(fd, out, std::min<std::size_t>(n, 1000));  // short reads on purpose
  };
  TraceReader reader(source);
  std::vector<Event> back;
  Event e;
  ReadStatus s;
  while ((s = reader.next(e)) == ReadStatus::Event) back.push_back(e);
  producer.join();
  close(fds[0]);
  ASSERT_EQ(s, ReadStatus::End) << reader.error().message();
  EXPECT_TRUE(reader.complete());
  EXPECT_EQ(back, expected);
  EXPECT_GT(reads, 1000u);
}

TEST(TraceFormat, WrongMagicAndVersionNameTheOffset) {
  Written w = writeTrace(100, 1024, 5, 2, true);
  Bytes bad = w.bytes;
  bad[0] = 'X';
  std::vector<Event> back;
  TraceError err;
  EXPECT_EQ(readAll(bad, back, &err), ReadStatus::Error);
  EXPECT_EQ(err.kind, ErrorKind::BadMagic);
  EXPECT_EQ(err.offset, 0u);
  EXPECT_NE(err.message().find("(bad magic) at byte offset 0"), std::string::npos) << err.message();

  bad = w.bytes;
  putU16(bad.data() + 8, kFormatVersion + 1);
  EXPECT_EQ(readAll(bad, back, &err), ReadStatus::Error);
  EXPECT_EQ(err.kind, ErrorKind::BadVersion);
  EXPECT_EQ(err.offset, 8u);
  EXPECT_NE(err.message().find("version 4"), std::string::npos) << err.message();
  EXPECT_TRUE(back.empty());

  try {
    (void)readTrace(bad.data(), bad.size());
    ADD_FAILURE() << "no exception";
  } catch (const TraceFormatError& ex) {
    EXPECT_EQ(ex.kind(), ErrorKind::BadVersion);
    EXPECT_EQ(ex.offset(), 8u);
    EXPECT_NE(std::string(ex.what()).find("offset 8"), std::string::npos);
  }
}

TEST(TraceFormat, TraceWithoutTrailerIsValidButIncomplete) {
  Written w = writeTrace(1000, 512, 6, 3, true, /*finish=*/false);
  std::vector<Event> back;
  bool complete = true;
  ASSERT_EQ(readAll(w.bytes, back, nullptr, &complete), ReadStatus::End);
  EXPECT_FALSE(complete);
  EXPECT_EQ(back, w.events);
  // An empty trace (header only) too.
  Bytes header(w.bytes.begin(), w.bytes.begin() + kFileHeaderSize);
  back.clear();
  ASSERT_EQ(readAll(header, back, nullptr, &complete), ReadStatus::End);
  EXPECT_FALSE(complete);
  EXPECT_TRUE(back.empty());
}

TEST(TraceFormat, TrailerFromTailGivesTheTotalsTheReaderReports) {
  Written w = writeTrace(20'000, 1024, 8, 5, true);
  TraceReader reader(MemorySource{w.bytes.data(), w.bytes.size()});
  Event e;
  ReadStatus s;
  while ((s = reader.next(e)) == ReadStatus::Event) {}
  ASSERT_EQ(s, ReadStatus::End) << reader.error().message();
  ASSERT_TRUE(reader.complete());
  EXPECT_EQ(reader.totals().events, 20'000u);

  // The last kMaxTrailerBytes of the file, as a replay reads them; the whole file when the
  // trace is no longer than that; and the trailer alone.
  const std::size_t n = std::min(w.bytes.size(), kMaxTrailerBytes);
  const std::optional<TraceTotals> tail = trailerFromTail(w.bytes.data() + w.bytes.size() - n, n);
  ASSERT_TRUE(tail.has_value());
  EXPECT_EQ(*tail, reader.totals());
  const std::size_t trailer = w.bytes.size() - w.boundaries[w.boundaries.size() - 2];
  EXPECT_EQ(trailerFromTail(w.bytes.data() + w.bytes.size() - trailer, trailer), reader.totals());

  Written small = writeTrace(3, 512, 9, 1, false);
  TraceReader smallReader(MemorySource{small.bytes.data(), small.bytes.size()});
  while (smallReader.next(e) == ReadStatus::Event) {}
  ASSERT_TRUE(smallReader.complete());
  EXPECT_EQ(trailerFromTail(small.bytes.data(), small.bytes.size()), smallReader.totals());

  // None without a trailer, nor when the tail is cut short of it or its CRC does not match.
  Written open = writeTrace(1000, 512, 6, 3, true, /*finish=*/false);
  const std::size_t m = std::min(open.bytes.size(), kMaxTrailerBytes);
  EXPECT_FALSE(trailerFromTail(open.bytes.data() + open.bytes.size() - m, m).has_value());
  EXPECT_FALSE(trailerFromTail(w.bytes.data() + w.bytes.size() - n, n - 1).has_value());
  Bytes flipped = w.bytes;
  flipped.back() ^= 0x01;
  EXPECT_FALSE(trailerFromTail(flipped.data() + flipped.size() - n, n).has_value());
}

// The chunk that contains byte `at`: the largest boundary <= at (header is [0, 16)).
std::size_t chunkStart(const std::vector<std::size_t>& boundaries, std::size_t at) {
  std::size_t start = 0;
  for (std::size_t b : boundaries)
    if (b <= at) start = b;
  return start;
}

TEST(TraceFormatFuzz, EveryTruncationIsAnErrorAtTheCutChunkOrACleanPrefix) {
  Written w = writeTrace(300, 200, 7, 4, false);
  ASSERT_GT(w.boundaries.size(), 10u);
  for (std::size_t len = 0; len < w.bytes.size(); ++len) {
    Bytes cut(w.bytes.begin(), w.bytes.begin() + static_cast<std::ptrdiff_t>(len));
    std::vector<Event> back;
    TraceError err;
    bool complete = true;
    const ReadStatus s = readAll(cut, back, &err, &complete);
    const bool atBoundary =
        std::find(w.boundaries.begin(), w.boundaries.end(), len) != w.boundaries.end();
    ASSERT_LE(back.size(), w.events.size());
    for (std::size_t i = 0; i < back.size(); ++i) ASSERT_EQ(back[i], w.events[i]) << len;
    if (atBoundary) {
      ASSERT_EQ(s, ReadStatus::End) << len << ": " << err.message();
      EXPECT_FALSE(complete);
    } else {
      ASSERT_EQ(s, ReadStatus::Error) << len;
      EXPECT_EQ(err.offset, len < kFileHeaderSize ? 0 : chunkStart(w.boundaries, len)) << len;
      EXPECT_TRUE(err.kind == ErrorKind::TruncatedChunk || err.kind == ErrorKind::TruncatedHeader)
          << len << ": " << err.message();
    }
  }
}

TEST(TraceFormatFuzz, EverySingleBitFlipIsDetectedAtItsChunk) {
  Written w = writeTrace(300, 200, 8, 4, false);
  for (std::size_t byte = 0; byte < w.bytes.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      Bytes bad = w.bytes;
      bad[byte] ^= static_cast<unsigned char>(1u << bit);
      std::vector<Event> back;
      TraceError err;
      if (byte == 8 && bit == 0) {
        // Version 2 becomes 3, which only adds a chunk kind: the same events.
        ASSERT_EQ(readAll(bad, back, &err), ReadStatus::End) << err.message();
        ASSERT_EQ(back, w.events);
        continue;
      }
      ASSERT_EQ(readAll(bad, back, &err), ReadStatus::Error) << "byte " << byte << " bit " << bit;
      if (byte == 10 && bit == 0) {
        // The SITES flag is a known flag (the header has no CRC): a trace without sites then
        // fails at its first event chunk, whose creating events lack their site varint.
        EXPECT_EQ(err.kind, ErrorKind::BadEvent) << err.message();
        EXPECT_GE(err.offset, kFileHeaderSize);
      } else if (byte < kFileHeaderSize) {
        EXPECT_LE(err.offset, 10u);
      } else {
        EXPECT_EQ(err.offset, chunkStart(w.boundaries, byte))
            << "byte " << byte << " bit " << bit << ": " << err.message();
      }
      for (std::size_t i = 0; i < back.size(); ++i) ASSERT_EQ(back[i], w.events[i]);
    }
  }
}

TEST(TraceFormatFuzz, RandomBytesNeverCrashTheReader) {
  std::mt19937_64 rng(9);
  Written w = writeTrace(50, 200, 9, 2, false);
  std::size_t errors = 0;
  for (int round = 0; round < 30'000; ++round) {
    Bytes b;
    const int kind = round % 3;
    if (kind != 0) b.assign(w.bytes.begin(), w.bytes.begin() + kFileHeaderSize);
    const std::size_t n = rng() % 300;
    std::size_t payloadAt = b.size() + kChunkHeaderSize;
    if (kind == 2) {  // a chunk header with the right magic, length and CRC over random bytes
      b.resize(payloadAt + n);
      for (std::size_t i = payloadAt; i < b.size(); ++i) b[i] = static_cast<unsigned char>(rng());
      if (n > 0) b[payloadAt] = 0;  // base id 0
      putU32(b.data() + payloadAt - 16, rng() % 8 == 0 ? kTrailerChunkMagic : kEventChunkMagic);
      putU32(b.data() + payloadAt - 12, static_cast<std::uint32_t>(n));
      putU32(b.data() + payloadAt - 8, static_cast<std::uint32_t>(rng() % (n / 2 + 2)));
      putU32(b.data() + payloadAt - 4, crc32(b.data() + payloadAt, n));
    } else {
      for (std::size_t i = 0; i < n; ++i) b.push_back(static_cast<unsigned char>(rng()));
    }
    std::vector<Event> back;
    TraceError err;
    const ReadStatus s = readAll(b, back, &err);
    ASSERT_NE(s, ReadStatus::Event);
    if (s == ReadStatus::Error) {
      ++errors;
      EXPECT_LE(err.offset, b.size());
      EXPECT_FALSE(err.message().empty());
    }
  }
  EXPECT_GT(errors, 25'000u);
}

TEST(TraceWriter, RejectsMalformedEventsAndWritesNothingForThem) {
  Bytes out;
  std::vector<unsigned char> buffer(256);
  TraceWriter writer(buffer.data(), buffer.size(), VectorSink{&out, nullptr});
  using W = decltype(writer);
  Event e;
  e.op = Op::Free;
  e.object = 0;
  EXPECT_EQ(writer.append(e), W::kRejected) << "object 0 does not exist yet";
  e.op = Op::Malloc;
  e.size = 10;
  EXPECT_EQ(writer.append(e), 0u);
  EXPECT_EQ(writer.append(e), 1u);
  e.op = Op::Memalign;
  EXPECT_EQ(writer.append(e), W::kRejected) << "memalign needs its alignment";
  e.flags = kFlagAligned;
  e.alignLog2 = 64;
  EXPECT_EQ(writer.append(e), W::kRejected);
  e.op = Op::Free;
  e.flags = kFlagFailed;
  e.object = 1;
  EXPECT_EQ(writer.append(e), W::kRejected) << "free cannot fail";
  e.op = static_cast<Op>(15);  // reserved
  e.flags = 0;
  EXPECT_EQ(writer.append(e), W::kRejected);
  e.op = Op::ReapMalloc;
  e.target = 2;
  EXPECT_EQ(writer.append(e), W::kRejected) << "reap 2 does not exist";
  e.target = 1;
  EXPECT_EQ(writer.append(e), 2u);
  EXPECT_EQ(writer.events(), 3u);
  ASSERT_TRUE(writer.finish());
  EXPECT_EQ(writer.append(e), W::kRejected) << "finished";
  std::vector<Event> back;
  ASSERT_EQ(readAll(out, back), ReadStatus::End);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back[2].target, 1u);
  EXPECT_EQ(back[2].object, 2u);

  std::vector<unsigned char> tiny(kMinWriterBuffer - 1);
  Bytes none;
  TraceWriter small(tiny.data(), tiny.size(), VectorSink{&none, nullptr});
  EXPECT_FALSE(small.ok());
  EXPECT_TRUE(none.empty());
}

TEST(TraceWriter, HotPathDoesNotAllocate) {
  static unsigned char buffer[4096];
  std::size_t sunk = 0;
  auto sink = [&sunk](const unsigned char*, std::size_t n) {
    sunk += n;
    return true;
  };
  EventSource src(11, 4, true);
  std::vector<Event> events;
  for (int i = 0; i < 100'000; ++i) events.push_back(src.make());
  const std::size_t before = gNewCalls;
  TraceWriter writer(buffer, sizeof buffer, sink);
  std::uint64_t created = 0;
  for (Event& e : events) {
    if (opCreates(e.op) && !(e.flags & kFlagFailed)) ++created;
    writer.append(e);
  }
  ASSERT_TRUE(writer.finish());
  EXPECT_EQ(gNewCalls, before);
  EXPECT_EQ(writer.objects(), created);
  EXPECT_EQ(sunk, writer.bytesWritten());
  EXPECT_GT(writer.chunks(), 50u);
}

TEST(TraceWriter, StopsWhenTheSinkFails) {
  int calls = 0;
  auto sink = [&calls](const unsigned char*, std::size_t) { return ++calls < 3; };
  std::vector<unsigned char> buffer(kMinWriterBuffer);
  TraceWriter writer(buffer.data(), buffer.size(), sink);
  Event e;
  e.size = 1;
  int appended = 0;
  while (writer.append(e) != decltype(writer)::kRejected) ++appended;
  EXPECT_FALSE(writer.ok());
  EXPECT_EQ(calls, 3);
  EXPECT_GT(appended, 10);
  EXPECT_FALSE(writer.finish());
}

TEST(TraceReaderPerf, TenMillionEventsInMemory) {
  Written w = writeTrace(10'000'000, 1 << 20, 10, 8, true);
  TraceReader reader(MemorySource{w.bytes.data(), w.bytes.size()});
  Event e;
  std::uint64_t n = 0, check = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (reader.next(e) == ReadStatus::Event) {
    ++n;
    check += e.size;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(reader.complete()) << reader.error().message();
  EXPECT_EQ(n, 10'000'000u);
  std::uint64_t want = 0;
  for (const Event& x : w.events) want += x.size;
  EXPECT_EQ(check, want);
  std::printf("reader: %.1f M events/s (%.2f bytes/event, %.1f MB)\n", double(n) / s / 1e6,
              double(w.bytes.size()) / double(n), double(w.bytes.size()) / 1e6);
}

}  // namespace

namespace {

// A writer over a byte vector: the trace in `bytes` after finish().
struct VersionTwoTrace {
  Bytes bytes;
  unsigned char buffer[4096];
  TraceWriter<VectorSink> writer{buffer, sizeof buffer, VectorSink{&bytes, nullptr}};
};

}  // namespace

TEST(TraceFormatV2, ProgramChunkTouchAndThreadEventsRoundTrip) {
  VersionTwoTrace t;
  ASSERT_TRUE(t.writer.program(4242, 17, "/usr/bin/some-program"));
  const std::uint64_t big = t.writer.append(Event{Op::Calloc, 0, 0, 0, 10, kNoObject, kNoObject, 1 << 24});
  ASSERT_EQ(big, 0u);
  EXPECT_EQ(t.writer.append(Event{Op::ThreadStart, 0, 0, 5, 20, kNoObject, 0, 0}), kNoObject);
  EXPECT_EQ(t.writer.append(Event{Op::ThreadStart, kFlagNull, 0, 9, 21, kNoObject, kNoObject, 0}),
            kNoObject);
  EXPECT_EQ(t.writer.append(Event{Op::Touch, 0, 0, 5, 30, big, kNoObject, 8192}), kNoObject);
  EXPECT_EQ(t.writer.append(Event{Op::Free, 0, 0, 5, 31, big, kNoObject, 0}), kNoObject);
  EXPECT_EQ(t.writer.append(Event{Op::ThreadEnd, 0, 0, 5, 40, kNoObject, kNoObject, 0}), kNoObject);
  ASSERT_TRUE(t.writer.finish());
  EXPECT_EQ(t.writer.threads(), 10u) << "thread 9 is the highest index named";

  TraceReader reader(MemorySource{t.bytes.data(), t.bytes.size()});
  std::vector<Event> back;
  Event e;
  ReadStatus s;
  while ((s = reader.next(e)) == ReadStatus::Event) back.push_back(e);
  ASSERT_EQ(s, ReadStatus::End) << reader.error().message();
  EXPECT_TRUE(reader.complete());
  EXPECT_EQ(reader.version(), 2);
  EXPECT_EQ(reader.program().pid, 4242u);
  EXPECT_EQ(reader.program().parentPid, 17u);
  EXPECT_STREQ(reader.program().path, "/usr/bin/some-program");
  ASSERT_EQ(back.size(), 6u);
  EXPECT_EQ(back[1].op, Op::ThreadStart);
  EXPECT_EQ(back[1].thread, 5u);
  EXPECT_EQ(back[1].target, 0u) << "the creating thread, as a thread index";
  EXPECT_EQ(back[2].target, kNoObject);
  EXPECT_EQ(back[2].flags, kFlagNull);
  EXPECT_EQ(back[3].op, Op::Touch);
  EXPECT_EQ(back[3].object, 0u);
  EXPECT_EQ(back[3].size, 8192u);
  EXPECT_EQ(back[5].op, Op::ThreadEnd);
  EXPECT_EQ(reader.totals().threads, 10u);
}

TEST(TraceFormatV2, ProgramChunkOnlyBeforeTheFirstEvent) {
  VersionTwoTrace t;
  ASSERT_NE(t.writer.append(Event{Op::Malloc, 0, 0, 0, 1, kNoObject, kNoObject, 8}),
            TraceWriter<VectorSink>::kRejected);
  EXPECT_FALSE(t.writer.program(1, 0, "/bin/late"));
  ASSERT_TRUE(t.writer.finish());
  std::vector<Event> back;
  ASSERT_EQ(readAll(t.bytes, back), ReadStatus::End);
  EXPECT_EQ(back.size(), 1u);

  // A program chunk spliced in after an event chunk is an error at its offset.
  VersionTwoTrace p;
  ASSERT_TRUE(p.writer.program(7, 1, "/bin/x"));
  ASSERT_TRUE(p.writer.finish());
  const Bytes programChunk(p.bytes.begin() + kFileHeaderSize, p.bytes.end() - (kChunkHeaderSize + 3));
  VersionTwoTrace q;
  ASSERT_NE(q.writer.append(Event{Op::Malloc, 0, 0, 0, 1, kNoObject, kNoObject, 8}),
            TraceWriter<VectorSink>::kRejected);
  ASSERT_TRUE(q.writer.flush());
  Bytes spliced = q.bytes;
  const std::size_t at = spliced.size();
  spliced.insert(spliced.end(), programChunk.begin(), programChunk.end());
  TraceError err;
  EXPECT_EQ(readAll(spliced, back, &err), ReadStatus::Error);
  EXPECT_EQ(err.kind, ErrorKind::BadChunkMagic);
  EXPECT_EQ(err.offset, at);
}

TEST(TraceFormatV2, VersionOneTracesStillReadAndRefuseVersionTwoContent) {
  // A version 2 trace of version 1 ops only, relabelled version 1: read as before.
  VersionTwoTrace t;
  const std::uint64_t a = t.writer.append(Event{Op::Malloc, 0, 0, 0, 1, kNoObject, kNoObject, 64});
  t.writer.append(Event{Op::Free, 0, 0, 0, 2, a, kNoObject, 0});
  ASSERT_TRUE(t.writer.finish());
  Bytes v1 = t.bytes;
  putU16(v1.data() + 8, 1);
  {
    TraceReader reader(MemorySource{v1.data(), v1.size()});
    Event e;
    int n = 0;
    ReadStatus s;
    while ((s = reader.next(e)) == ReadStatus::Event) ++n;
    EXPECT_EQ(s, ReadStatus::End) << reader.error().message();
    EXPECT_EQ(n, 2);
    EXPECT_EQ(reader.version(), 1);
    EXPECT_EQ(reader.program().pid, 0u);
  }
  // Version 1 with a touch event: the op is unknown there.
  VersionTwoTrace u;
  const std::uint64_t b = u.writer.append(Event{Op::Malloc, 0, 0, 0, 1, kNoObject, kNoObject, 1 << 20});
  u.writer.append(Event{Op::Touch, 0, 0, 0, 2, b, kNoObject, 4096});
  ASSERT_TRUE(u.writer.finish());
  Bytes bad = u.bytes;
  putU16(bad.data() + 8, 1);
  std::vector<Event> back;
  TraceError err;
  EXPECT_EQ(readAll(bad, back, &err), ReadStatus::Error);
  EXPECT_EQ(err.kind, ErrorKind::BadEvent);
  EXPECT_NE(err.message().find("unknown op"), std::string::npos) << err.message();
  // Version 1 with a program chunk: not a chunk version 1 knows.
  VersionTwoTrace p;
  ASSERT_TRUE(p.writer.program(3, 1, "/bin/y"));
  ASSERT_TRUE(p.writer.finish());
  bad = p.bytes;
  putU16(bad.data() + 8, 1);
  EXPECT_EQ(readAll(bad, back, &err), ReadStatus::Error);
  EXPECT_EQ(err.kind, ErrorKind::BadChunkMagic);
  EXPECT_EQ(err.offset, kFileHeaderSize);
}

TEST(TraceFormatV2, MalformedProgramChunkAndThreadTargetsAreRejected) {
  VersionTwoTrace p;
  ASSERT_TRUE(p.writer.program(3, 1, "/bin/abc"));
  ASSERT_TRUE(p.writer.finish());
  // Claim a longer path than the payload holds (and fix the CRC so only the content is wrong).
  Bytes bad = p.bytes;
  unsigned char* payload = bad.data() + kFileHeaderSize + kChunkHeaderSize;
  const std::uint32_t len = getU32(bad.data() + kFileHeaderSize + 4);
  payload[2] = 9;  // pid 3, ppid 1, then the length byte
  putU32(bad.data() + kFileHeaderSize + 12, crc32(payload, len));
  std::vector<Event> back;
  TraceError err;
  EXPECT_EQ(readAll(bad, back, &err), ReadStatus::Error);
  EXPECT_EQ(err.kind, ErrorKind::BadEvent);
  EXPECT_NE(err.message().find("program chunk"), std::string::npos) << err.message();

  // The writer refuses a creating-thread index over 32 bits.
  VersionTwoTrace t;
  EXPECT_EQ(t.writer.append(Event{Op::ThreadStart, 0, 0, 1, 1, kNoObject, std::uint64_t{1} << 32, 0}),
            TraceWriter<VectorSink>::kRejected);
}
