// The process the layers run in: its environment, read at start-up for the tunables, and its
// id, by which the shim tells a forked child from its parent. Both run inside the first
// malloc, so neither may allocate.
#pragma once
#include <unistd.h>

#include <cstdlib>

namespace strata::platform {

// The value of the environment variable name, nullptr when it is not set: std::getenv, which
// reads environ in place (no copy, no allocation, no lock).
inline const char* environmentValue(const char* name) noexcept { return std::getenv(name); }

// The calling process's id, one system call; a forked child's differs from its parent's.
inline pid_t processId() noexcept { return ::getpid(); }

}  // namespace strata::platform
