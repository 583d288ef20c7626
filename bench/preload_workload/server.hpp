// preload_workload's server workload (preload_workload.cpp describes it): requests made by
// one side and checked and freed by the other, through fixed rings. Included once, by
// preload_workload.cpp.
#pragma once
#include <sched.h>

#include <atomic>
#include <cstdint>
#include <thread>

#include "objects.hpp"

namespace pw {

// A single-producer single-consumer ring of requests (fixed array, no allocation).
class Ring {
 public:
  bool push(const Object& o) {
    const std::size_t t = tail_.load(std::memory_order_relaxed);
    if (t - head_.load(std::memory_order_acquire) == kCap) return false;
    slots_[t & (kCap - 1)] = o;
    tail_.store(t + 1, std::memory_order_release);
    return true;
  }
  bool pop(Object& o) {
    const std::size_t h = head_.load(std::memory_order_relaxed);
    if (h == tail_.load(std::memory_order_acquire)) return false;
    o = slots_[h & (kCap - 1)];
    head_.store(h + 1, std::memory_order_release);
    return true;
  }

 private:
  static constexpr std::size_t kCap = 1024;
  Object slots_[kCap];
  alignas(64) std::atomic<std::size_t> head_{0};
  alignas(64) std::atomic<std::size_t> tail_{0};
};

// One side of the server: its request sizes, scratch sizes and number of requests.
struct ServerSide {
  Rng rng;
  Sizes requests, scratch;
  std::size_t count;
  ServerSide(std::uint64_t seed, double scale)
      : rng(seed),
        requests(rng, [](Rng& r) {
          return r.below(16) == 0 ? r.logUniform(4096, 32768) : r.logUniform(32, 1024);
        }),
        scratch(rng, [](Rng& r) { return r.logUniform(64, 256); }),
        count(static_cast<std::size_t>(1000000 * scale)) {}

  // Builds one request: a short-lived scratch object used and dropped while building it.
  Object request() {
    const Object tmp = make(scratch.next(), rng.tag());
    const Object r = make(requests.next(), static_cast<std::uint8_t>(tmp.tag % 255 + 1));
    checkAndFree(tmp);
    return r;
  }
};

// Two threads: each sends `count` requests to the other and frees the other's requests.
// A thread whose outgoing ring is full serves its incoming ring meanwhile, so neither waits
// for the other forever.
inline void serverTwoThreads(ServerSide (&sides)[2]) {
  static Ring rings[2];
  auto body = [&](int me) {
    ServerSide& s = sides[me];
    Ring& out = rings[me];
    Ring& in = rings[1 - me];
    const std::size_t expected = sides[1 - me].count;
    std::size_t received = 0;
    Object o;
    auto serve = [&] {
      bool any = false;
      while (in.pop(o)) {
        checkAndFree(o);
        ++received;
        any = true;
      }
      return any;
    };
    for (std::size_t i = 0; i < s.count; ++i) {
      const Object r = s.request();
      while (!out.push(r))
        if (!serve()) sched_yield();
      if ((i & 15) == 15) serve();
    }
    while (received < expected)
      if (!serve()) sched_yield();
  };
  std::thread other(body, 1);
  body(0);
  other.join();
}

// One thread: the requests of both sides go through one FIFO of the same depth, each
// freed when the FIFO is full (oldest first).
inline void serverOneThread(ServerSide (&sides)[2]) {
  static Ring ring;
  Object o;
  for (ServerSide& s : sides) {
    for (std::size_t i = 0; i < s.count; ++i) {
      const Object r = s.request();
      if (!ring.push(r)) {
        ring.pop(o);
        checkAndFree(o);
        ring.push(r);
      }
    }
  }
  while (ring.pop(o)) checkAndFree(o);
}

}  // namespace pw
