// Building traces in memory for the replay tests, event by event, with small chunks so the
// multi-chunk paths are exercised.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "strata/trace/writer.hpp"

namespace strata::test {

using Bytes = std::vector<unsigned char>;

// A TraceWriter sink appending to a byte vector.
struct VectorSink {
  Bytes* out;
  bool operator()(const unsigned char* d, std::size_t n) {
    out->insert(out->end(), d, d + n);
    return true;
  }
};

// Builds a trace in memory event by event; small chunks so multi-chunk paths are exercised.
class TraceBuilder {
 public:
  explicit TraceBuilder(std::size_t buffer = 4096)
      : buf_(buffer), w_(buf_.data(), buf_.size(), VectorSink{&bytes_}) {}
  // Appends an event; returns the id it created (or kNoObject).
  std::uint64_t add(trace::Op op, std::uint64_t size = 0, std::uint64_t target = trace::kNoObject,
                    std::uint64_t object = trace::kNoObject, std::uint8_t flags = 0,
                    std::uint32_t thread = 0, std::uint8_t alignLog2 = 0) {
    trace::Event e;
    e.op = op;
    e.size = size;
    e.target = target;
    e.object = object;
    e.flags = flags;
    e.thread = thread;
    e.alignLog2 = alignLog2;
    e.timeNs = ++time_;
    const std::uint64_t id = w_.append(e);
    EXPECT_NE(id, trace::TraceWriter<VectorSink>::kRejected);
    return id;
  }
  std::uint64_t malloc(std::uint64_t n, std::uint32_t t = 0) {
    return add(trace::Op::Malloc, n, trace::kNoObject, trace::kNoObject, 0, t);
  }
  void free(std::uint64_t id, std::uint32_t t = 0) {
    add(trace::Op::Free, 0, trace::kNoObject, id, 0, t);
  }
  // Version 2 events: the program touched n bytes of object id; thread t started (created by
  // thread creator) or ended.
  void touch(std::uint64_t id, std::uint64_t n, std::uint32_t t = 0) {
    add(trace::Op::Touch, n, trace::kNoObject, id, 0, t);
  }
  void threadStart(std::uint32_t t, std::uint32_t creator) {
    add(trace::Op::ThreadStart, 0, creator, trace::kNoObject, 0, t);
  }
  void threadEnd(std::uint32_t t) { add(trace::Op::ThreadEnd, 0, trace::kNoObject, trace::kNoObject, 0, t); }
  // The finished trace (with trailer unless trailer is false).
  Bytes finish(bool trailer = true) {
    if (trailer) EXPECT_TRUE(w_.finish());
    else EXPECT_TRUE(w_.flush());
    return bytes_;
  }

 private:
  Bytes bytes_;
  std::vector<unsigned char> buf_;
  trace::TraceWriter<VectorSink> w_;
  std::uint64_t time_ = 0;
};

}  // namespace strata::test
