// Where TraceReader (reader.hpp) reads its bytes from: memory or a file descriptor. Any
// callable std::ptrdiff_t(unsigned char* out, std::size_t n) that reads like read(2) will do.
#pragma once
#include <cerrno>
#include <cstddef>
#include <cstring>

#include <unistd.h>

namespace strata::trace {

// A source over bytes in memory.
struct MemorySource {
  const unsigned char* data;
  std::size_t size;
  std::size_t pos = 0;
  std::ptrdiff_t operator()(unsigned char* out, std::size_t n) noexcept {
    const std::size_t k = n < size - pos ? n : size - pos;
    if (k != 0) std::memcpy(out, data + pos, k);
    pos += k;
    return static_cast<std::ptrdiff_t>(k);
  }
};

// A source over a file descriptor (a file or a pipe): read(2), retried on EINTR. Does not own
// or close the descriptor.
struct FdSource {
  int fd;
  std::ptrdiff_t operator()(unsigned char* out, std::size_t n) noexcept {
    for (;;) {
      const ssize_t r = ::read(fd, out, n);
      if (r >= 0 || errno != EINTR) return static_cast<std::ptrdiff_t>(r);
    }
  }
};

}  // namespace strata::trace
