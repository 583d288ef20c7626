// region_table's workloads (region_table.cpp, which describes them): templates over an
// adapter (adapters.hpp), each writing every object's requested bytes once. Included once, by
// region_table.cpp.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <vector>

#include "../workloads.hpp"
#include "adapters.hpp"

namespace rt {

// ---------------------------------------------------------------------------------------
// Workloads
// ---------------------------------------------------------------------------------------

// Sizes drawn before anything is timed (logUniform calls pow, which would cost more than a
// bump allocation), replayed cyclically.
class Sizes {
 public:
  Sizes(std::uint32_t lo, std::uint32_t hi, std::uint64_t seed) : table_(kCount) {
    strata::bench::Rng rng(seed);
    for (auto& s : table_) s = rng.logUniform(lo, hi);
  }
  std::uint32_t next() noexcept { return table_[i_++ & (kCount - 1)]; }

 private:
  static constexpr std::size_t kCount = 1 << 16;
  std::vector<std::uint32_t, strata::bench::MappedAllocator<std::uint32_t>> table_;
  std::size_t i_ = 0;
};

// An object on a workload's own stack or queue (kept in scratch memory mapped before the
// baseline, so the harness's bookkeeping is not counted as the allocator's memory).
struct Entry {
  void* p;
  std::size_t n;
};

// What a workload body sees: the counting run passes touch = false.
struct Ctx {
  double scale;
  Entry* scratch;          // kScratch entries
  bool touch = true;
  std::size_t failures = 0;
};
constexpr std::size_t kScratch = 1 << 16;

template <class A>
inline void* allocTouch(A& a, typename A::Region* r, std::size_t n, Ctx& c) {
  void* p = a.alloc(r, n);
  if (c.touch) {
    if (p != nullptr) {
      std::memset(p, static_cast<int>(n) | 1, n);
    } else {
      ++c.failures;
    }
  }
  return p;
}

template <class A>
concept HasMark = requires(A a, typename A::Region* r) { a.release(r, a.mark(r)); };
template <class A>
concept HasPopLast = requires(A a, typename A::Region* r, void* p) { a.popLast(r, p, 1); };

std::size_t scaled(double full, double scale) {
  return static_cast<std::size_t>(std::max(full * scale, 16.0));
}

// (a) compiler-like phases.
template <class A>
void phases(A& a, Ctx& c) {
  Sizes sizes(8, 128, 201);
  const std::size_t perPhase = scaled(150000, c.scale);
  auto* root = a.create(nullptr);
  for (int phase = 0; phase < 20; ++phase) {
    for (int i = 0; i < 16; ++i) allocTouch(a, root, 64, c);   // the long-lived tables
    auto* r = a.create(root);
    for (std::size_t i = 0; i < perPhase; ++i) allocTouch(a, r, sizes.next(), c);
    a.destroy(r);
  }
  a.destroy(root);
}

// (b) obstack-style nested scopes, each freed back to its mark.
template <class A>
void scopes(A& a, Ctx& c) {
  Sizes sizes(8, 256, 202);
  strata::bench::Rng rng(302);
  const std::size_t steps = scaled(1e6, c.scale);
  constexpr std::size_t kMaxDepth = 64;
  auto* root = a.create(nullptr);
  if constexpr (HasMark<A>) {
    using Mark = decltype(a.mark(root));
    Mark marks[kMaxDepth];
    std::size_t depth = 0;
    for (std::size_t s = 0; s < steps; ++s) {
      if (depth == 0 || (depth < kMaxDepth && rng.below(100) < 52)) {
        marks[depth++] = a.mark(root);
        const std::size_t k = 1 + rng.below(8);
        for (std::size_t i = 0; i < k; ++i) allocTouch(a, root, sizes.next(), c);
      } else {
        a.release(root, marks[--depth]);
      }
    }
    while (depth > 0) a.release(root, marks[--depth]);
  } else {
    typename A::Region* stack[kMaxDepth + 1];
    std::size_t depth = 0;
    stack[0] = root;
    for (std::size_t s = 0; s < steps; ++s) {
      if (depth == 0 || (depth < kMaxDepth && rng.below(100) < 52)) {
        stack[depth + 1] = a.create(stack[depth]);
        ++depth;
        const std::size_t k = 1 + rng.below(8);
        for (std::size_t i = 0; i < k; ++i) allocTouch(a, stack[depth], sizes.next(), c);
      } else {
        a.destroy(stack[depth--]);
      }
    }
    while (depth > 0) a.destroy(stack[depth--]);
  }
  a.destroy(root);
}

// (c) xalloc-style stack: LIFO individual frees.
template <class A>
void stack(A& a, Ctx& c) {
  Sizes sizes(16, 256, 203);
  strata::bench::Rng rng(303);
  const std::size_t steps = scaled(1.6e6, c.scale);
  auto* r = a.create(nullptr);
  std::size_t depth = 0;
  for (std::size_t s = 0; s < steps; ++s) {
    if (depth == 0 || (depth < kScratch && rng.below(2) == 0)) {
      const std::size_t n = sizes.next();
      c.scratch[depth++] = {allocTouch(a, r, n, c), n};
    } else {
      const Entry e = c.scratch[--depth];
      if constexpr (HasPopLast<A>) {
        a.popLast(r, e.p, e.n);
      } else {
        a.free(r, e.p, e.n);
      }
    }
  }
  a.destroy(r);
}

// (d) producer-consumer: a FIFO queue, the oldest object freed first.
template <class A>
void producerConsumer(A& a, Ctx& c) {
  Sizes sizes(16, 256, 204);
  strata::bench::Rng rng(304);
  const std::size_t steps = scaled(2e6, c.scale);
  constexpr std::size_t kMask = kScratch - 1;
  const std::size_t lo = scaled(2000, std::min(1.0, c.scale * 4));
  const std::size_t hi = 20 * lo;   // <= kScratch
  const std::size_t block = scaled(100000, std::min(1.0, c.scale * 4));
  auto* r = a.create(nullptr);
  std::size_t head = 0, tail = 0;   // live objects are [head, tail)
  for (std::size_t s = 0; s < steps; ++s) {
    // Bursts: the producer is ahead (60 %) for a block of steps, then behind (40 %).
    const std::uint64_t produce = (s / block) % 2 == 0 ? 60 : 40;
    const std::size_t len = tail - head;
    if (len < lo || (len < hi && rng.below(100) < produce)) {
      const std::size_t n = sizes.next();
      c.scratch[tail++ & kMask] = {allocTouch(a, r, n, c), n};
    } else {
      const Entry e = c.scratch[head++ & kMask];
      a.free(r, e.p, e.n);
    }
  }
  a.destroy(r);
}

// (e) a server: a region per connection, a child region per request.
template <class A>
void server(A& a, Ctx& c) {
  Sizes sizes(16, 512, 205);
  Sizes buffers(1024, 8192, 206);
  strata::bench::Rng rng(305);
  const std::size_t requests = scaled(50000, c.scale);
  constexpr std::size_t kOpen = 16;
  auto* root = a.create(nullptr);
  typename A::Region* conn[kOpen];
  std::size_t left[kOpen];
  auto open = [&](std::size_t i) {
    conn[i] = a.create(root);
    left[i] = 8 + rng.below(25);
    allocTouch(a, conn[i], 4096, c);   // its I/O buffer
    for (int k = 0; k < 10; ++k) allocTouch(a, conn[i], sizes.next(), c);
  };
  for (std::size_t i = 0; i < kOpen; ++i) open(i);
  for (std::size_t q = 0; q < requests; ++q) {
    const std::size_t i = rng.below(kOpen);
    auto* req = a.create(conn[i]);
    allocTouch(a, req, buffers.next(), c);
    const std::size_t k = 20 + rng.below(41);
    for (std::size_t j = 0; j < k; ++j) allocTouch(a, req, sizes.next(), c);
    a.destroy(req);
    if (--left[i] == 0) {
      a.destroy(conn[i]);
      open(i);
    }
  }
  for (std::size_t i = 0; i < kOpen; ++i) a.destroy(conn[i]);
  a.destroy(root);
}

struct WorkloadInfo {
  const char* name;
  const char* what;
};
constexpr WorkloadInfo kWorkloads[] = {
    {"phases", "(a) compiler phases: a region per phase, 8..128 B objects freed at once"},
    {"scopes", "(b) obstack-style nested scopes freed back to a mark, 8..256 B"},
    {"stack", "(c) xalloc-style stack: LIFO individual frees, 16..256 B"},
    {"producer-consumer", "(d) FIFO queue of 2k..40k objects of 16..256 B in bursts, individual frees"},
    {"server", "(e) server: region per connection, child region per request"},
};
constexpr int kWorkloadCount = sizeof kWorkloads / sizeof kWorkloads[0];

template <class A>
void runWorkload(int w, A& a, Ctx& c) {
  switch (w) {
    case 0: phases(a, c); break;
    case 1: scopes(a, c); break;
    case 2: stack(a, c); break;
    case 3: producerConsumer(a, c); break;
    default: server(a, c); break;
  }
}

}  // namespace rt
