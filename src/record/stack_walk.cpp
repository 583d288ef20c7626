// The stack walk's step (stack_walk.hpp), called by _Unwind_Backtrace for each frame.
#include "stack_walk.hpp"

namespace strata::record {

// One frame: the walking function's own is left out, and so are the leading ones in the skip
// range; a zero address (the outermost frame) or enough frames end the walk.
_Unwind_Reason_Code stackWalkStep(_Unwind_Context* context, void* walk) {
  auto* w = static_cast<StackWalk*>(walk);
  if (w->first) {
    w->first = false;
    return _URC_NO_REASON;
  }
  const uintptr_t ip = _Unwind_GetIP(context);
  if (ip == 0) return _URC_END_OF_STACK;
  if (w->n == 0 && ip >= w->skipStart && ip < w->skipEnd) return _URC_NO_REASON;
  w->frames[w->n++] = ip;
  return w->n == w->max ? _URC_END_OF_STACK : _URC_NO_REASON;
}

}  // namespace strata::record
