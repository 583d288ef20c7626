// Writing bytes to a file descriptor without allocating: the layers' reports (a corruption,
// a debug finding, malloc_stats, a bad tunable) and TraceHeap's buffer. Reporting must not
// allocate: the heap that reports may be the process's malloc, and it may be damaged.
#pragma once
#include <unistd.h>

#include <cerrno>
#include <cstddef>

namespace strata::platform {

// The n bytes at bytes written to fd, retrying short and interrupted writes; false on an
// error (some may have been written).
inline bool writeAll(int fd, const void* bytes, std::size_t n) noexcept {
  const char* at = static_cast<const char*>(bytes);
  while (n > 0) {
    const ssize_t done = ::write(fd, at, n);
    if (done < 0 && errno == EINTR) continue;
    if (done <= 0) return false;
    at += done;
    n -= static_cast<std::size_t>(done);
  }
  return true;
}

// The n bytes at text written to standard error, as writeAll does.
inline bool writeStderr(const void* text, std::size_t n) noexcept {
  return writeAll(STDERR_FILENO, text, n);
}

}  // namespace strata::platform
