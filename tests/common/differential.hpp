// The randomised differential harness every composition plugs into.
//
// It drives a heap through a long seeded sequence of malloc / free (and realloc and clear
// where the heap offers them) and checks each step against a simple model, the set of
// live objects:
//   - no two live objects overlap;
//   - every pointer honours the heap's Alignment;
//   - every requested byte is writable (each object is filled completely);
//   - contents survive until the object is freed (checked in full at free and realloc);
//   - getSize(p) >= the request, where the heap is a SizedHeap.
// expectEverythingReturned() adds the last check: once the heap is destroyed, the
// process's top heaps hold exactly what they held before it was made.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "strata/concepts.hpp"
#include "strata/top/memory_account.hpp"

namespace strata::test {

// Which object sizes a run draws.
enum class SizeMix {
  Small,    // 1 .. 128 bytes, uniform
  Medium,   // 64 B .. 16 KiB, log-uniform
  Large,    // 16 KiB .. 512 KiB, log-uniform
  Mixed,    // 60 % small, 34 % medium, 5.5 % up to 64 KiB, 0.5 % large
};

struct DiffConfig {
  std::uint64_t seed = 1;
  std::size_t ops = 1'000'000;
  std::size_t maxLive = 4096;  // the live set swings between 0 and about this many objects
  SizeMix sizes = SizeMix::Mixed;
  bool useRealloc = true;      // when the heap has realloc
  bool useClear = false;       // when the heap has clear()
  bool zeroSizes = false;      // also request 0 bytes (ANSI-level heaps only)
  std::size_t minRequest = 1;  // smallest request (some building blocks need a word)
};

struct DiffStats {
  std::size_t mallocs = 0, frees = 0, reallocs = 0, clears = 0;
  std::size_t peakLiveObjects = 0, peakLiveBytes = 0;
};

template <class H>
concept ReallocHeap = requires(H& h, void* p, std::size_t n) {
  { h.realloc(p, n) } -> std::same_as<void*>;
};

class SizeSource {
 public:
  SizeSource(SizeMix mix, std::uint64_t seed) : mix_(mix), rng_(seed) {}
  std::size_t next() {
    switch (mix_) {
      case SizeMix::Small: return uniform(1, 128);
      case SizeMix::Medium: return logUniform(64, 16 << 10);
      case SizeMix::Large: return logUniform(16 << 10, 512 << 10);
      case SizeMix::Mixed: break;
    }
    const double r = unit(rng_);
    if (r < 0.60) return uniform(1, 128);
    if (r < 0.94) return logUniform(64, 4096);
    if (r < 0.995) return logUniform(4096, 64 << 10);
    return logUniform(64 << 10, 512 << 10);
  }
  std::mt19937_64& rng() { return rng_; }

 private:
  std::size_t uniform(std::size_t lo, std::size_t hi) {
    return std::uniform_int_distribution<std::size_t>(lo, hi)(rng_);
  }
  std::size_t logUniform(std::size_t lo, std::size_t hi) {
    const double x = std::exp(std::log(double(lo)) +
                              unit(rng_) * (std::log(double(hi)) - std::log(double(lo))));
    return std::clamp<std::size_t>(static_cast<std::size_t>(x), lo, hi);
  }
  SizeMix mix_;
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> unit{0.0, 1.0};
};

// Fills n bytes at p with the object's tag byte.
inline void fillTag(void* p, std::size_t n, unsigned char tag) { std::memset(p, tag, n); }

// True when all n bytes at p equal tag; reports the first bad offset otherwise.
inline bool checkTag(const void* p, std::size_t n, unsigned char tag, std::size_t& bad) {
  const auto* b = static_cast<const unsigned char*>(p);
  std::uint64_t word;
  std::memset(&word, tag, sizeof word);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, b + i, 8);
    if (w != word) break;
  }
  for (; i < n; ++i) {
    if (b[i] != tag) {
      bad = i;
      return false;
    }
  }
  return true;
}

template <Heap H>
class DifferentialRun {
 public:
  DifferentialRun(H& heap, const DiffConfig& cfg) : heap_(heap), cfg_(cfg), sizes_(cfg.sizes, cfg.seed) {}

  // Runs the whole sequence; stops at the first failed check (reported through gtest).
  DiffStats run() {
    auto& rng = sizes_.rng();
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const std::size_t phase = std::max<std::size_t>(cfg_.maxLive * 4, 1000);
    for (std::size_t op = 0; op < cfg_.ops && !failed(); ++op) {
      // Alternate growing and shrinking phases so the live set swings over its range.
      const bool growing = (op / phase) % 2 == 0;
      const double pMalloc = live_.size() >= cfg_.maxLive ? 0.0 : growing ? 0.65 : 0.35;
      const double r = unit(rng);
      if constexpr (ClearableHeap<H>) {
        if (cfg_.useClear && r < 2e-5) {
          doClear();
          continue;
        }
      }
      if (live_.empty() || r < pMalloc) {
        doMalloc();
      } else if constexpr (ReallocHeap<H>) {
        if (cfg_.useRealloc && r > 0.9) {
          doRealloc(pick(rng));
          continue;
        }
        doFree(pick(rng));
      } else {
        doFree(pick(rng));
      }
    }
    while (!live_.empty() && !failed()) doFree(live_.size() - 1);
    return stats_;
  }

 private:
  struct Obj {
    void* p;
    std::size_t n;
    unsigned char tag;
  };

  bool failed() const { return failed_; }

  std::size_t pick(std::mt19937_64& rng) {
    return std::uniform_int_distribution<std::size_t>(0, live_.size() - 1)(rng);
  }

  std::size_t nextRequest() {
    if (cfg_.zeroSizes && (sizes_.rng()() & 1023) == 0) return 0;
    return std::max(cfg_.minRequest, sizes_.next());
  }

  // Checks a new object against the model and records it.
  bool admit(void* p, std::size_t n) {
    if (p == nullptr) {
      failed_ = true;
      ADD_FAILURE() << "malloc(" << n << ") returned nullptr (op " << opCount() << ")";
      return false;
    }
    if (!detail::is_aligned(p, H::Alignment)) {
      failed_ = true;
      ADD_FAILURE() << "pointer " << p << " for " << n << " bytes is not " << H::Alignment
                    << "-byte aligned";
      return false;
    }
    if constexpr (SizedHeap<H>) {
      const std::size_t usable = heap_.getSize(p);
      if (usable < n) {
        failed_ = true;
      ADD_FAILURE() << "getSize(" << p << ") = " << usable << " < requested " << n;
        return false;
      }
    }
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    const std::size_t extent = std::max<std::size_t>(n, 1);
    auto next = ranges_.lower_bound(a);
    if (next != ranges_.end() && next->first < a + extent) {
      failed_ = true;
      ADD_FAILURE() << "object " << p << " (" << n << " B) overlaps live object at 0x"
                    << std::hex << next->first << std::dec << " (" << next->second << " B)";
      return false;
    }
    if (next != ranges_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + std::max<std::size_t>(prev->second, 1) > a) {
        failed_ = true;
      ADD_FAILURE() << "object " << p << " (" << n << " B) overlaps live object at 0x"
                      << std::hex << prev->first << std::dec << " (" << prev->second << " B)";
        return false;
      }
    }
    ranges_.emplace(a, n);
    return true;
  }

  bool verify(const Obj& o, std::size_t n) {
    std::size_t bad = 0;
    if (!checkTag(o.p, n, o.tag, bad)) {
      failed_ = true;
      ADD_FAILURE() << "object " << o.p << " (" << o.n << " B) was overwritten at offset "
                    << bad << " while live";
      return false;
    }
    return true;
  }

  void noteLive() {
    stats_.peakLiveObjects = std::max(stats_.peakLiveObjects, live_.size());
    stats_.peakLiveBytes = std::max(stats_.peakLiveBytes, liveBytes_);
  }

  void doMalloc() {
    const std::size_t n = nextRequest();
    void* p = heap_.malloc(n);
    if (!admit(p, n)) return;
    const auto tag = static_cast<unsigned char>(++tagCounter_ | 1);
    fillTag(p, n, tag);
    live_.push_back({p, n, tag});
    liveBytes_ += n;
    ++stats_.mallocs;
    noteLive();
  }

  void retire(std::size_t i) {
    ranges_.erase(reinterpret_cast<std::uintptr_t>(live_[i].p));
    liveBytes_ -= live_[i].n;
    live_[i] = live_.back();
    live_.pop_back();
  }

  void doFree(std::size_t i) {
    if (!verify(live_[i], live_[i].n)) return;
    void* p = live_[i].p;
    retire(i);
    heap_.free(p);
    ++stats_.frees;
  }

  void doRealloc(std::size_t i) {
    if constexpr (ReallocHeap<H>) {
      const Obj old = live_[i];
      if (!verify(old, old.n)) return;
      std::size_t n = nextRequest();
      if (n == 0) n = 1;  // realloc(p, 0) frees; that path has its own tests
      retire(i);
      void* q = heap_.realloc(old.p, n);
      if (!admit(q, n)) return;
      Obj moved{q, n, old.tag};
      if (!verify(moved, std::min(old.n, n))) return;
      moved.tag = static_cast<unsigned char>(++tagCounter_ | 1);
      fillTag(q, n, moved.tag);
      live_.push_back(moved);
      liveBytes_ += n;
      ++stats_.reallocs;
      noteLive();
    }
  }

  void doClear() {
    if constexpr (ClearableHeap<H>) {
      for (const Obj& o : live_)
        if (!verify(o, o.n)) return;
      heap_.clear();
      live_.clear();
      ranges_.clear();
      liveBytes_ = 0;
      ++stats_.clears;
    }
  }

  std::size_t opCount() const { return stats_.mallocs + stats_.frees + stats_.reallocs; }

  H& heap_;
  DiffConfig cfg_;
  SizeSource sizes_;
  std::vector<Obj> live_;
  std::map<std::uintptr_t, std::size_t> ranges_;
  std::size_t liveBytes_ = 0;
  unsigned tagCounter_ = 0;
  DiffStats stats_;
  bool failed_ = false;  // the first failed check ends the run
};

template <Heap H>
DiffStats runDifferential(H& heap, const DiffConfig& cfg = {}) {
  return DifferentialRun<H>(heap, cfg).run();
}

// Makes a fresh H, runs the sequence, destroys H, and checks that the top heaps hold
// exactly what they held before (every byte went back to the system).
template <Heap H>
DiffStats expectEverythingReturned(const DiffConfig& cfg = {}) {
  const std::size_t before = processAccount().held();
  DiffStats stats;
  {
    auto heap = std::make_unique<H>();
    stats = runDifferential(*heap, cfg);
  }
  EXPECT_EQ(processAccount().held(), before)
      << "the top heaps still hold memory after the heap was destroyed";
  return stats;
}

}  // namespace strata::test
