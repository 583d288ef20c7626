// The calling thread's stack as return addresses, for allocation sites (sites.hpp). The walk
// uses the C++ runtime's unwinder (_Unwind_Backtrace, libgcc_s), which reads the .eh_frame
// unwind tables every program built by GCC or Clang for x86-64 carries, so it works on
// programs built without frame pointers (Debian's). It finds each function's table through
// the C library's _dl_find_object (libgcc of GCC 12 or later on glibc 2.35 or later, as in
// Debian 12), without a lock or an allocation. A frame whose code has no unwind table ends
// the walk there: what was found up to it is kept.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <unwind.h>

namespace strata::record {

// The state of one walk, and its step (stack_walk.cpp): keeps, skips or ends at each frame.
struct StackWalk {
  uint64_t* frames;
  size_t max;
  size_t n;
  uintptr_t skipStart, skipEnd;
  bool first;  // the next frame is the walking function's own
};
_Unwind_Reason_Code stackWalkStep(_Unwind_Context* context, void* walk);

// Writes up to `max` return addresses of the stack into frames, innermost first, and returns
// how many. The walk starts with the return address into the caller of the function walkStack
// is written in (always inlined: the walking function's own frame is the unwinder's first,
// and is left out), then leaves out the frames that follow as long as they lie in
// [skipStart, skipEnd) (the recorder's own code: a site starts at the program's call). Cost,
// per frame walked, skipped ones included: one lookup of the frame's unwind table and one
// interpretation of its rules (docs/recording.md measures the whole).
[[gnu::always_inline]] inline size_t walkStack(uint64_t* frames, size_t max, uintptr_t skipStart,
                                               uintptr_t skipEnd) noexcept {
  if (max == 0) return 0;
  StackWalk w{frames, max, 0, skipStart, skipEnd, true};
  _Unwind_Backtrace(stackWalkStep, &w);
  return w.n;
}

}  // namespace strata::record
