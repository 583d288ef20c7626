// Operation sequences shared by the benchmark programs.
//
// A workload is generated once, before anything is timed, as a flat array of Ops over a
// table of object slots: replaying it is a load, a branch and a call per step, so the
// harness costs next to nothing and every allocator sees exactly the same requests in the
// same order. Generation is seeded and uses its own generator, so a workload is the same on
// every run, machine and standard library.
//
// Every workload ends with all of its objects freed, and records its peak live bytes (the
// largest sum of requested sizes alive at once), the denominator of fragmentation.
#pragma once
#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <new>
#include <queue>
#include <string>
#include <utility>
#include <vector>

namespace strata::bench {

// An allocator for the generators' big arrays that maps them directly from the kernel.
// Why: glibc raises its mmap threshold every time it frees a large mapped block, so
// building workloads with ordinary vectors would change how glibc malloc behaves in the
// measured runs that follow. Cost: a system call per allocation; only used for big arrays.
template <class T>
struct MappedAllocator {
  using value_type = T;
  MappedAllocator() = default;
  template <class U>
  MappedAllocator(const MappedAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    void* p = ::mmap(nullptr, bytes(n), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept { ::munmap(p, bytes(n)); }

  template <class U>
  bool operator==(const MappedAllocator<U>&) const noexcept {
    return true;
  }

 private:
  static std::size_t bytes(std::size_t n) { return n * sizeof(T) > 0 ? n * sizeof(T) : 1; }
};

template <class T>
using MappedVector = std::vector<T, MappedAllocator<T>>;

// One step: size != 0 stores malloc(size) in slots[slot]; size == 0 frees slots[slot].
struct Op {
  std::uint32_t slot;
  std::uint32_t size;
};

struct Workload {
  std::string name;
  std::string description;
  MappedVector<Op> ops;
  std::uint32_t slots = 0;            // how many slots the ops refer to
  std::uint64_t mallocs = 0;
  std::uint64_t requestedBytes = 0;   // sum of all requested sizes
  std::uint64_t peakLiveBytes = 0;    // largest sum of requested sizes alive at once
  std::uint64_t peakLiveObjects = 0;
};

// A small seeded generator (splitmix64): fast, and identical everywhere, unlike the
// distributions of <random>.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() noexcept {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n).
  std::uint64_t below(std::uint64_t n) noexcept {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }
  // Uniform in [0, 1).
  double unit() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  bool chance(double p) noexcept { return unit() < p; }
  // Log-uniform in [lo, hi]: as many objects of 16-32 B as of 1-2 KiB, as programs have.
  std::uint32_t logUniform(std::uint32_t lo, std::uint32_t hi) noexcept {
    const double v = static_cast<double>(lo) * std::pow(static_cast<double>(hi) / lo, unit());
    return std::clamp(static_cast<std::uint32_t>(v), lo, hi);
  }
  // Geometric with the given mean (>= 1): how many steps a short-lived object lives.
  std::uint64_t geometric(double mean) noexcept {
    const double u = 1.0 - unit();
    return 1 + static_cast<std::uint64_t>(-std::log(u) * (mean - 1.0));
  }

 private:
  std::uint64_t state_;
};

// Records ops against a slot table and keeps the live-byte statistics.
class WorkloadBuilder {
 public:
  WorkloadBuilder(std::string name, std::string description, std::size_t expectedOps) {
    w_.name = std::move(name);
    w_.description = std::move(description);
    w_.ops.reserve(expectedOps);
  }

  bool isLive(std::uint32_t slot) const noexcept {
    return slot < sizeOf_.size() && sizeOf_[slot] != 0;
  }

  void alloc(std::uint32_t slot, std::uint32_t size) {
    if (slot >= sizeOf_.size()) sizeOf_.resize(slot + 1, 0);
    w_.ops.push_back({slot, size});
    sizeOf_[slot] = size;
    ++w_.mallocs;
    w_.requestedBytes += size;
    live_ += size;
    ++liveObjects_;
    w_.peakLiveBytes = std::max(w_.peakLiveBytes, live_);
    w_.peakLiveObjects = std::max(w_.peakLiveObjects, liveObjects_);
  }

  void free(std::uint32_t slot) {
    w_.ops.push_back({slot, 0});
    live_ -= sizeOf_[slot];
    --liveObjects_;
    sizeOf_[slot] = 0;
  }

  std::size_t opCount() const noexcept { return w_.ops.size(); }

  // Frees whatever is still live, in slot order, and hands the workload over.
  Workload finish() {
    for (std::uint32_t s = 0; s < sizeOf_.size(); ++s) {
      if (sizeOf_[s] != 0) free(s);
    }
    w_.slots = static_cast<std::uint32_t>(sizeOf_.size());
    return std::move(w_);
  }

 private:
  Workload w_;
  MappedVector<std::uint32_t> sizeOf_;
  std::uint64_t live_ = 0;
  std::uint64_t liveObjects_ = 0;

};

// Random churn over a fixed table of `slots`: each step picks a slot at random, frees its
// object if it has one, otherwise allocates one there with a size from sizeFn(rng). The live
// set settles at about half the table; every object's lifetime is random.
template <class SizeFn>
Workload slotChurn(std::string name, std::string description, std::size_t ops,
                   std::uint32_t slots, std::uint64_t seed, SizeFn sizeFn) {
  Rng rng(seed);
  WorkloadBuilder b(std::move(name), std::move(description), ops + slots);
  for (std::size_t i = 0; i < ops; ++i) {
    const auto s = static_cast<std::uint32_t>(rng.below(slots));
    if (b.isLive(s)) {
      b.free(s);
    } else {
      b.alloc(s, sizeFn(rng));
    }
  }
  return b.finish();
}

// malloc immediately followed by free of the same object: the allocator's fast path and
// nothing else (the tightest loop there is, so any per-call overhead shows).
template <class SizeFn>
Workload lifoPairs(std::string name, std::string description, std::size_t ops,
                   std::uint64_t seed, SizeFn sizeFn) {
  Rng rng(seed);
  WorkloadBuilder b(std::move(name), std::move(description), ops + 2);
  for (std::size_t i = 0; i + 1 < ops; i += 2) {
    b.alloc(0, sizeFn(rng));
    b.free(0);
  }
  return b.finish();
}

// `cycles` times: allocate `objects` objects, then free all of them in random order
// (a batch job, a parser building and dropping a tree).
template <class SizeFn>
Workload allocAllFreeAll(std::string name, std::string description, std::uint32_t objects,
                         std::uint32_t cycles, std::uint64_t seed, SizeFn sizeFn) {
  Rng rng(seed);
  WorkloadBuilder b(std::move(name), std::move(description),
                    std::size_t{2} * objects * cycles);
  MappedVector<std::uint32_t> order(objects);
  for (std::uint32_t c = 0; c < cycles; ++c) {
    for (std::uint32_t s = 0; s < objects; ++s) b.alloc(s, sizeFn(rng));
    for (std::uint32_t s = 0; s < objects; ++s) order[s] = s;
    for (std::uint32_t s = objects; s > 1; --s) {
      std::swap(order[s - 1], order[rng.below(s)]);
    }
    for (std::uint32_t s : order) b.free(s);
  }
  return b.finish();
}

// Objects with lifetimes: `allocations` objects are allocated one per step; object i gets
// (size, lifetime) = objectFn(rng, i), and is freed `lifetime` allocations later
// (kForever: at the end). Frees happen in death order, interleaved with the allocations,
// as a program's do. This shapes the live set: short lifetimes give a small churning
// set, a share of kForever objects makes it grow, lifetimes that vary with i give phases.
inline constexpr std::uint64_t kForever = ~std::uint64_t{0};

template <class ObjectFn>
Workload lifetimes(std::string name, std::string description, std::size_t allocations,
                   std::uint64_t seed, ObjectFn objectFn) {
  Rng rng(seed);
  WorkloadBuilder b(std::move(name), std::move(description), 2 * allocations);
  using Death = std::pair<std::uint64_t, std::uint32_t>;  // (step it dies at, slot)
  std::priority_queue<Death, MappedVector<Death>, std::greater<>> dying;
  std::uint32_t nextSlot = 0;
  MappedVector<std::uint32_t> spare;
  for (std::uint64_t t = 0; t < allocations; ++t) {
    while (!dying.empty() && dying.top().first <= t) {
      const std::uint32_t s = dying.top().second;
      dying.pop();
      b.free(s);
      spare.push_back(s);
    }
    const auto [size, life] = objectFn(rng, t);
    std::uint32_t s;
    if (!spare.empty()) {
      s = spare.back();
      spare.pop_back();
    } else {
      s = nextSlot++;
    }
    b.alloc(s, size);
    if (life != kForever) dying.push({t + std::max<std::uint64_t>(life, 1), s});
  }
  while (!dying.empty()) {
    b.free(dying.top().second);
    dying.pop();
  }
  return b.finish();
}

}  // namespace strata::bench
