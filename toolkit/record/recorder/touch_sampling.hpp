// Which large objects are measured (large.hpp, touch.hpp). Measuring one costs the program a
// page fault per page it touches, so a program that writes whole large buffers over and over
// pays the most and gains the least: an object without a touch event is taken as touched
// whole anyway. So the recorder learns, per size class (the power of two below the requested
// size), whether the program writes that class whole: after kWholeStreak measured objects of
// a class in a row were touched whole, it measures only one in kSampleEvery of the class's
// new objects; the first measured object that was not touched whole puts the class back to
// measuring every object. A class of sparse objects (calloc'ed tables, buffers of which the
// start is used) is therefore always measured whole; a class written whole costs a sixteenth
// of what it did. STRATA_TRACE_TOUCH_ALL=1 measures every large object.
//
// The class states are shared by every thread, read and written with relaxed atomics (a lost
// update only delays a switch by one object); the sampling tick is per thread.
#pragma once
#include <stdint.h>

#include <atomic>

#include "record/recorder/touch.hpp"

namespace strata::record {

struct TouchSampling {
  static constexpr uint32_t kWholeStreak = 32;
  static constexpr uint32_t kSampleEvery = 16;
  bool all = false;  // STRATA_TRACE_TOUCH_ALL: measure every large object
  std::atomic<uint32_t> streak[64] = {};  // per size class: objects touched whole in a row
};
[[gnu::visibility("hidden")]] extern TouchSampling gTouchSampling;
[[gnu::visibility("hidden")]] extern constinit thread_local
    __attribute__((tls_model("initial-exec"))) uint32_t tTouchTick;

inline unsigned touchClass(uint64_t size) {
  return size == 0 ? 0 : 63 - static_cast<unsigned>(__builtin_clzll(size));
}

// Whether a new large object of `size` bytes is to be measured (prepared).
inline bool measureTouch(uint64_t size) {
  if (gTouchSampling.all) return true;
  const uint32_t s = gTouchSampling.streak[touchClass(size)].load(std::memory_order_relaxed);
  if (s < TouchSampling::kWholeStreak) return true;
  return ++tTouchTick % TouchSampling::kSampleEvery == 0;
}

// Notes what a measured object of `size` bytes showed: `touched` of its bytes touched
// (kTouchUnknown, a measurement that failed, shows nothing).
inline void noteTouched(uint64_t size, uint64_t touched) {
  if (touched == kTouchUnknown) return;
  std::atomic<uint32_t>& s = gTouchSampling.streak[touchClass(size)];
  if (touched >= size) {
    const uint32_t v = s.load(std::memory_order_relaxed);
    if (v < TouchSampling::kWholeStreak) s.store(v + 1, std::memory_order_relaxed);
  } else if (s.load(std::memory_order_relaxed) != 0) {
    s.store(0, std::memory_order_relaxed);
  }
}

}  // namespace strata::record
