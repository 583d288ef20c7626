// The stack walk (stack_walk.hpp): _Unwind_Backtrace's step, and loading libunwind's walker.
#include "record/recorder/stack_walk.hpp"

#include <dlfcn.h>

namespace strata::record {

constinit FastWalker gFastWalker = nullptr;

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

bool loadFastWalker() noexcept {
  // Never unloaded: the walker and its per-thread caches live as long as the process.
  void* lib = ::dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return false;
  auto walk = reinterpret_cast<FastWalker>(::dlsym(lib, "unw_backtrace"));
  if (walk == nullptr) return false;
  // unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD): the rules libunwind
  // looks up on a miss are cached per thread, not in one table behind a lock.
  using SetPolicy = int (*)(void* space, int policy);
  auto setPolicy = reinterpret_cast<SetPolicy>(::dlsym(lib, "_ULx86_64_set_caching_policy"));
  auto* space = static_cast<void**>(::dlsym(lib, "_ULx86_64_local_addr_space"));
  constexpr int kCachePerThread = 2;  // UNW_CACHE_PER_THREAD in libunwind.h
  if (setPolicy != nullptr && space != nullptr) setPolicy(*space, kCachePerThread);
  gFastWalker = walk;
  return true;
}

}  // namespace strata::record
