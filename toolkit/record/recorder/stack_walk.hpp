// The calling thread's stack as return addresses, for allocation sites (site_recording.hpp). Two
// walkers, both over the .eh_frame unwind tables every program built by GCC or Clang for
// x86-64 carries (so programs built without frame pointers, as Debian's, walk as well):
// - libunwind's unw_backtrace (Debian's libunwind8), when loadFastWalker() could load it. Its
//   x86-64 fast path keeps, per thread, what it learnt of each return address's frame (where
//   the caller's frame and return address are), so a path walked before costs a table lookup
//   per frame instead of a lookup and interpretation of the frame's unwind rules.
//   loaded privately (RTLD_LOCAL): its own _Unwind_* and backtrace symbols, which would
//   otherwise replace libgcc's and glibc's for the whole program, stay its own.
// - the C++ runtime's _Unwind_Backtrace (libgcc_s), otherwise: every frame's table found
//   through the C library's _dl_find_object (no lock, no allocation) and its rules
//   interpreted anew each time.
// A frame whose code has no unwind table ends the walk there (libunwind's fast path too):
// what was found up to it is kept.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <unwind.h>

namespace strata::record {

// The state of one _Unwind_Backtrace walk, and its step (stack_walk.cpp): keeps, skips or
// ends at each frame.
struct StackWalk {
  uint64_t* frames;
  size_t max;
  size_t n;
  uintptr_t skipStart, skipEnd;
  bool first;  // the next frame is the walking function's own
};
_Unwind_Reason_Code stackWalkStep(_Unwind_Context* context, void* walk);

// libunwind's unw_backtrace(buffer, size): fills buffer with up to size addresses, the first
// the return address into the function that called it; returns how many.
using FastWalker = int (*)(void** buffer, int size);
// The fast walker in use, or nullptr (then _Unwind_Backtrace). Set once at start, before any
// walk (loadFastWalker); cleared in a fork child that must not take the loader's lock.
[[gnu::visibility("hidden")]] extern FastWalker gFastWalker;

// Loads libunwind (libunwind.so.8, privately) and makes its unw_backtrace the walker, with
// per-thread caches (no lock shared between threads on a miss). False, and the walker stays
// _Unwind_Backtrace, when it is not installed. Calls dlopen: at start, under the recursion
// guard.
bool loadFastWalker() noexcept;

// The most frames a walk leaves out as the recorder's own before the program's first (the
// fast walker is asked for this many more than it keeps).
inline constexpr size_t kMaxSkippedFrames = 6;

// Writes up to `max` (at most 16) return addresses of the stack into frames, innermost first,
// and returns how many. The walk starts with the return address into the caller of the
// function walkStack is written in (always inlined: the walking function's own frame is the
// unwinder's first, and is left out), then leaves out the frames that follow as long as they
// lie in [skipStart, skipEnd) (the recorder's own code: a site starts at the program's call).
[[gnu::always_inline]] inline size_t walkStack(uint64_t* frames, size_t max, uintptr_t skipStart,
                                               uintptr_t skipEnd) noexcept {
  if (max == 0) return 0;
  if (FastWalker walk = gFastWalker) {
    void* found[1 + kMaxSkippedFrames + 16];
    const size_t want = 1 + kMaxSkippedFrames + (max < 16 ? max : 16);
    const int got = walk(found, static_cast<int>(want));
    size_t i = 1;  // found[0]: the walking function's own frame
    while (i < static_cast<size_t>(got) && reinterpret_cast<uintptr_t>(found[i]) >= skipStart &&
           reinterpret_cast<uintptr_t>(found[i]) < skipEnd)
      ++i;
    size_t n = 0;
    for (; i < static_cast<size_t>(got) && n < max; ++i) {
      const auto ip = reinterpret_cast<uintptr_t>(found[i]);
      if (ip == 0) break;
      frames[n++] = ip;
    }
    return n;
  }
  StackWalk w{frames, max, 0, skipStart, skipEnd, true};
  _Unwind_Backtrace(stackWalkStep, &w);
  return w.n;
}

}  // namespace strata::record
