// The scheduler, for the layers' waits: a spin lock or a heap being built gives way to the
// thread it waits for instead of spinning on a core that thread may need.
#pragma once
#include <sched.h>

namespace strata::platform {

// Gives the calling thread's core to another ready thread, if any: one system call.
inline void yieldThread() noexcept { ::sched_yield(); }

}  // namespace strata::platform
