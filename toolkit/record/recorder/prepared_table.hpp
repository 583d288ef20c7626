// PreparedTable: the large objects whose pages were given back at creation (large.hpp), with
// their requested sizes, so that the thread that frees one can measure it. Lock-free: the
// creating thread adds the object before the program sees its pointer, and the freeing thread
// (the program orders the free after the creation) takes it out before the real free, neither
// under the recorder's lock nor after merging the rings. A lookup looks at a fixed window of
// kWindow slots from the address's home slot (four cache lines), never further: a slot that
// is taken out is simply cleared, with no tombstones to accumulate. When the window is full,
// add() says so and the object is left unmeasured (it counts as touched whole), which takes
// thousands of live measured objects hashing close together. Tested by
// tests/toolkit/record/record_prepared_table_test.cpp.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <atomic>

namespace strata::record {

class PreparedTable {
 public:
  static constexpr size_t kWindow = 16;

  // Maps the table, `slots` (a power of two, at least kWindow) slots; false when out of
  // memory.
  bool init(size_t slots) noexcept;

  // Records the object at p (non-null) of `size` bytes, replacing an earlier entry for p.
  // False when its window is full (nothing is recorded then).
  bool add(uintptr_t p, uint64_t size) noexcept {
    remove(p);
    Slot* w = window(p);
    for (size_t i = 0; i < kWindow; ++i) {
      uintptr_t expected = 0;
      if (w[i].addr.load(std::memory_order_relaxed) == 0 &&
          w[i].addr.compare_exchange_strong(expected, kClaimed, std::memory_order_acquire)) {
        w[i].size.store(size, std::memory_order_relaxed);
        w[i].addr.store(p, std::memory_order_release);
        return true;
      }
    }
    return false;
  }
  // The size recorded for p, or 0 when there is none.
  uint64_t find(uintptr_t p) const noexcept {
    const Slot* w = window(p);
    for (size_t i = 0; i < kWindow; ++i)
      if (w[i].addr.load(std::memory_order_acquire) == p)
        return w[i].size.load(std::memory_order_relaxed);
    return 0;
  }
  // Takes p's entry out; returns its size, or 0 when there was none.
  uint64_t remove(uintptr_t p) noexcept {
    Slot* w = window(p);
    for (size_t i = 0; i < kWindow; ++i) {
      if (w[i].addr.load(std::memory_order_acquire) != p) continue;
      const uint64_t size = w[i].size.load(std::memory_order_relaxed);
      w[i].addr.store(0, std::memory_order_release);
      return size;
    }
    return 0;
  }
  // Calls f(addr, size) for every entry (at the end of the trace: no other thread changes
  // the table then).
  template <class F>
  void forEach(F f) const {
    for (size_t i = 0; i < slots_ + kWindow; ++i) {
      const uintptr_t a = table_[i].addr.load(std::memory_order_acquire);
      if (a != 0 && a != kClaimed) f(a, table_[i].size.load(std::memory_order_relaxed));
    }
  }

 private:
  struct Slot {
    std::atomic<uintptr_t> addr{0};
    std::atomic<uint64_t> size{0};
  };
  // A slot being filled: no object lives at address 1.
  static constexpr uintptr_t kClaimed = 1;

  // The window of p: kWindow slots from its home slot (the table has kWindow slots more than
  // it has homes, so a window never wraps).
  Slot* window(uintptr_t p) const noexcept {
    const uint64_t h = (static_cast<uint64_t>(p) >> 4) * 0x9E3779B97F4A7C15ull;
    return table_ + (h >> shift_);
  }

  Slot* table_ = nullptr;
  size_t slots_ = 0;
  unsigned shift_ = 64;
};

}  // namespace strata::record
