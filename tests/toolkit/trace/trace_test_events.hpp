// What the trace format's tests share: a generator of valid events (random or a realistic
// mix) with the exact events a reader must give back, a writer of them into memory (plain,
// or compressed where STRATA_TRACE_ZSTD is defined) and a reader of a whole trace.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "strata/trace/format.hpp"
#include "strata/trace/reader.hpp"
#include "strata/trace/writer.hpp"
#if defined(STRATA_TRACE_ZSTD)
#include "strata/trace/compression.hpp"
#endif

namespace strata::trace::testing {

using Bytes = std::vector<unsigned char>;

// A sink that appends to a byte vector and remembers where each sink call ended.
struct VectorSink {
  Bytes* out;
  std::vector<std::size_t>* boundaries;
  bool operator()(const unsigned char* d, std::size_t n) {
    out->insert(out->end(), d, d + n);
    if (boundaries != nullptr) boundaries->push_back(out->size());
    return true;
  }
};

// Generates valid events and the exact events a reader must give back.
class EventSource {
 public:
  EventSource(std::uint64_t seed, std::uint32_t threads, bool realistic)
      : rng_(seed), threads_(threads), realistic_(realistic) {}

  // Builds the next event to append; `expected` is completed by record().
  Event make() {
    return realistic_ ? makeRealistic() : makeRandom();
  }
  // Feeds the id the writer assigned; returns the canonical event a reader must give back.
  Event record(Event e, std::uint64_t assigned) {
    Event c = canonical(e);
    if (opCreates(e.op) && !(e.flags & kFlagFailed)) {
      c.object = assigned;
      ++nextId_;
      live_.push_back(assigned);
    }
    return c;
  }

 private:
  static Event canonical(const Event& e) {
    Event c = e;
    const bool hasTarget = targetPresent(e.op, e.flags);
    if (!hasTarget) c.target = kNoObject;
    if (!(objectPresent(e.op, e.flags))) c.object = kNoObject;
    if (!opHasSize(e.op)) c.size = 0;
    if (!(e.flags & kFlagAligned)) c.alignLog2 = 0;
    return c;
  }
  std::uint64_t pick(std::uint64_t n) { return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng_); }
  std::uint64_t anyId() { return pick(nextId_); }
  std::uint64_t takeLive() {  // removes a live object, recent ones more often
    if (live_.empty()) return kNoObject;
    std::size_t back = static_cast<std::size_t>(pick(std::min<std::size_t>(live_.size(), pick(2) ? 8 : live_.size())));
    std::size_t i = live_.size() - 1 - back;
    const std::uint64_t id = live_[i];
    live_[i] = live_.back();
    live_.pop_back();
    return id;
  }

  Event makeRandom() {
    Event e;
    do e.op = static_cast<Op>(pick(kOpCount));
    while (nextId_ == 0 && (!opCreates(e.op) || e.op == Op::Realloc || e.op == Op::ReapMalloc));
    const std::uint8_t allowed = opAllowedFlags(e.op);
    e.flags = static_cast<std::uint8_t>(pick(16) << 4) & allowed;
    if (e.op == Op::Memalign) e.flags |= kFlagAligned;
    if (nextId_ == 0) e.flags &= static_cast<std::uint8_t>(~kFlagNull);
    if (nextId_ == 0 && e.op == Op::ReapCreate) e.flags |= kFlagNull;  // no parent can exist yet
    e.alignLog2 = static_cast<std::uint8_t>(pick(64));
    e.thread = static_cast<std::uint32_t>(pick(4) == 0 ? pick(1u << 31) : pick(threads_));
    switch (pick(4)) {
      case 0: time_ += pick(100); break;
      case 1: time_ -= pick(1000); break;  // clocks of different threads disagree
      case 2: time_ = rng_(); break;
      default: time_ += pick(1u << 20); break;
    }
    e.timeNs = time_;
    e.size = pick(3) == 0 ? rng_() : pick(4096);
    if (nextId_ != 0) {
      e.target = anyId();
      e.object = anyId();
    }
    return e;
  }

  Event makeRealistic() {
    Event e;
    if (pick(10) == 0) thread_ = static_cast<std::uint32_t>(pick(threads_));
    e.thread = thread_;
    time_ += 20 + pick(400);
    e.timeNs = time_;
    const std::uint64_t r = pick(100);
    if (live_.size() > 5000 || (r < 45 && !live_.empty())) {
      e.op = pick(3) == 0 ? Op::Delete : Op::Free;
      e.object = takeLive();
      return e;
    }
    if (r < 50 && !live_.empty()) {
      e.op = Op::Realloc;
      e.target = takeLive();
    } else if (r < 80) {
      e.op = Op::Malloc;
    } else if (r < 95) {
      e.op = Op::New;
    } else if (r < 98) {
      e.op = Op::Calloc;
    } else {
      e.op = Op::Memalign;
      e.flags = kFlagAligned;
      e.alignLog2 = static_cast<std::uint8_t>(4 + pick(9));
    }
    const std::uint64_t s = pick(100);
    e.size = s < 70 ? 8 + pick(120) : s < 95 ? 128 + pick(4000) : 4096 + pick(1u << 20);
    return e;
  }

  std::mt19937_64 rng_;
  std::uint32_t threads_;
  bool realistic_;
  std::uint32_t thread_ = 0;
  std::uint64_t time_ = 0;
  std::uint64_t nextId_ = 0;
  std::vector<std::uint64_t> live_;
};

struct Written {
  Bytes bytes;
  std::vector<std::size_t> boundaries;  // end offset of the header and of every chunk
  std::vector<Event> events;
  std::uint64_t chunks = 0;
  std::uint64_t compressedChunks = 0;
};

enum class Mix : bool { Random, Realistic };
enum class Compress : bool { No, Yes };

#if defined(STRATA_TRACE_ZSTD)
// A writer's zstd compressor and its memory.
struct TestCompressor {
  explicit TestCompressor(std::size_t bufferSize)
      : workspace(ZstdCompressor::workspaceSize(1) / 8 + 1), scratch(bufferSize),
        zstd(workspace.data(), workspace.size() * 8, 1) {}
  ChunkCompressor get() { return zstd.chunkCompressor(scratch.data(), scratch.size()); }
  std::vector<std::uint64_t> workspace;
  Bytes scratch;
  ZstdCompressor zstd;
};
#endif

// Writes n events of the mix through a writer with a bufferSize chunk buffer, compressed or
// not (compression needs STRATA_TRACE_ZSTD), and returns the bytes and the events a reader
// must give back.
inline Written writeTrace(std::size_t n, std::size_t bufferSize, std::uint64_t seed,
                          std::uint32_t threads, Mix mix, Compress compress, bool finish = true) {
  Written w;
  std::vector<unsigned char> buffer(bufferSize);
  ChunkCompressor compressor;
#if defined(STRATA_TRACE_ZSTD)
  TestCompressor zstd(bufferSize);
  if (compress == Compress::Yes) compressor = zstd.get();
#else
  EXPECT_EQ(compress, Compress::No) << "compression needs STRATA_TRACE_ZSTD";
#endif
  TraceWriter writer(buffer.data(), buffer.size(), VectorSink{&w.bytes, &w.boundaries},
                     SiteBuffer{}, compressor);
  EventSource src(seed, threads, mix == Mix::Realistic);
  w.events.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Event e = src.make();
    const std::uint64_t id = writer.append(e);
    EXPECT_NE(id, decltype(writer)::kRejected) << "event " << i;
    w.events.push_back(src.record(e, id));
  }
  if (finish) EXPECT_TRUE(writer.finish());
  else EXPECT_TRUE(writer.flush());
  EXPECT_TRUE(writer.ok());
  EXPECT_EQ(writer.bytesWritten(), w.bytes.size());
  w.chunks = writer.chunks();
  w.compressedChunks = writer.compressedChunks();
  return w;
}

// The plain form the format tests use.
inline Written writeTrace(std::size_t n, std::size_t bufferSize, std::uint64_t seed,
                          std::uint32_t threads, bool realistic, bool finish = true) {
  return writeTrace(n, bufferSize, seed, threads, realistic ? Mix::Realistic : Mix::Random,
                    Compress::No, finish);
}

// `events` (as a reader gave them) written again into a 4 KiB-chunk trace.
inline Bytes rewrite(const std::vector<Event>& events, Compress compress) {
  Bytes out;
  std::vector<unsigned char> buffer(4096);
  ChunkCompressor compressor;
#if defined(STRATA_TRACE_ZSTD)
  TestCompressor zstd(buffer.size());
  if (compress == Compress::Yes) compressor = zstd.get();
#else
  (void)compress;
#endif
  TraceWriter writer(buffer.data(), buffer.size(), VectorSink{&out, nullptr}, SiteBuffer{},
                     compressor);
  for (const Event& e : events) EXPECT_NE(writer.append(e), decltype(writer)::kRejected);
  EXPECT_TRUE(writer.finish());
  return out;
}

// Reads everything; returns the status that ended it.
inline ReadStatus readAll(const Bytes& b, std::vector<Event>& out, TraceError* err = nullptr,
                   bool* complete = nullptr) {
  TraceReader reader(MemorySource{b.data(), b.size()});
  Event e;
  ReadStatus s;
  while ((s = reader.next(e)) == ReadStatus::Event) out.push_back(e);
  if (err != nullptr) *err = reader.error();
  if (complete != nullptr) *complete = reader.complete();
  EXPECT_EQ(reader.next(e), s) << "the final status must repeat";
  return s;
}

}  // namespace strata::trace::testing
