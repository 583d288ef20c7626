// Tests for ParallelReader (strata/trace/parallel_reader.hpp): on random traces, plain and
// compressed, whole, cut short or with a corrupt chunk in the middle, it gives exactly the
// events, the final status and the error of the sequential TraceReader, by next() and by
// nextBatch() alike, and it can be dropped half read.
// links: strata_trace_zstd
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "strata/trace/parallel_reader.hpp"
#include "strata/trace/reader.hpp"
#include "toolkit/trace/trace_test_events.hpp"

namespace {

using namespace strata::trace;
using namespace strata::trace::testing;

struct Outcome {
  std::vector<Event> events;
  ReadStatus status = ReadStatus::Event;
  TraceError error;
  bool complete = false;
  std::uint64_t objects = 0;
};

Outcome sequential(const Bytes& b) {
  Outcome o;
  TraceReader reader(MemorySource{b.data(), b.size()});
  Event e;
  while ((o.status = reader.next(e)) == ReadStatus::Event) o.events.push_back(e);
  o.error = reader.error();
  o.complete = reader.complete();
  o.objects = reader.objects();
  return o;
}

// Through ParallelReader, taking events one by one or (batches) a batch at a time, mixed.
Outcome parallel(const Bytes& b, bool batches) {
  Outcome o;
  ParallelReader reader(MemorySource{b.data(), b.size()});
  for (std::size_t turn = 0;; ++turn) {
    if (batches && turn % 3 != 0) {
      std::span<const Event> batch;
      o.status = reader.nextBatch(batch);
      if (o.status != ReadStatus::Event) {
        EXPECT_TRUE(batch.empty());
        break;
      }
      EXPECT_FALSE(batch.empty());
      o.events.insert(o.events.end(), batch.begin(), batch.end());
    } else {
      Event e;
      o.status = reader.next(e);
      if (o.status != ReadStatus::Event) break;
      o.events.push_back(e);
    }
  }
  Event e;
  EXPECT_EQ(reader.next(e), o.status) << "the final status must repeat";
  EXPECT_EQ(reader.eventsRead(), o.events.size());
  o.error = reader.error();
  o.complete = reader.complete();
  o.objects = reader.objects();
  return o;
}

void expectSame(const Outcome& a, const Outcome& b, const char* what) {
  ASSERT_EQ(a.events.size(), b.events.size()) << what;
  EXPECT_TRUE(a.events == b.events) << what;
  EXPECT_EQ(a.status, b.status) << what;
  EXPECT_EQ(a.error.kind, b.error.kind) << what;
  EXPECT_EQ(a.error.offset, b.error.offset) << what;
  EXPECT_EQ(a.error.message(), b.error.message()) << what;
  EXPECT_EQ(a.complete, b.complete) << what;
  EXPECT_EQ(a.objects, b.objects) << what;
}

TEST(ParallelReader, GivesTheEventsAndErrorsOfTheSequentialReader) {
  std::mt19937_64 rng(42);
  for (int round = 0; round < 24; ++round) {
    const Mix mix = round % 2 ? Mix::Realistic : Mix::Random;
    const Compress compress = round % 4 < 2 ? Compress::Yes : Compress::No;
    const std::size_t n = 1000 + rng() % 60'000;
    const std::size_t buffer = 256 + rng() % 32'768;
    Written w = writeTrace(n, buffer, rng(), 1 + rng() % 8, mix, compress);
    Bytes b = w.bytes;
    switch (round % 3) {
      case 0: break;  // whole
      case 1: b.resize(kFileHeaderSize + rng() % (b.size() - kFileHeaderSize)); break;  // cut
      default: b[b.size() / 2] ^= static_cast<unsigned char>(1 + rng() % 255); break;  // corrupt
    }
    const Outcome want = sequential(b);
    if (round % 3 == 2) {
      EXPECT_EQ(want.status, ReadStatus::Error) << "round " << round;
    }
    expectSame(want, parallel(b, false), "by next()");
    expectSame(want, parallel(b, true), "by nextBatch()");
  }
}

TEST(ParallelReader, AnEmptyOrForeignFileIsTheSameError) {
  for (const Bytes& b : {Bytes{}, Bytes{'S', 'T', 'R'}, Bytes(64, 'x')})
    expectSame(sequential(b), parallel(b, false), "short or foreign");
}

// Dropped after a few events, with the worker ahead: the destructor stops it.
TEST(ParallelReader, CanBeDroppedHalfRead) {
  const Written w = writeTrace(200'000, 4096, 3, 4, Mix::Realistic, Compress::Yes);
  for (int i = 0; i < 20; ++i) {
    ParallelReader reader(MemorySource{w.bytes.data(), w.bytes.size()});
    Event e;
    for (int k = 0; k < i * 1000; ++k) ASSERT_EQ(reader.next(e), ReadStatus::Event);
  }
}

}  // namespace
