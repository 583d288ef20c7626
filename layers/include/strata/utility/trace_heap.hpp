// TraceHeap: writes every malloc and free to a text trace, for replaying a program's heap
// traffic against other allocators or studying it offline.
//
// The trace is ASCII, one event per line:
//     m <id> <size> <ptr>    malloc number <id> (counting from 0) asked for <size> bytes and
//                            got <ptr> (0x0 when it failed)
//     f <ptr>                free(<ptr>); free(nullptr) is not traced
//     c                      clear(): every live object was freed at once
// <id> and <size> are decimal; <ptr> is lower-case hexadecimal with a 0x prefix. A pointer
// names one live object at a time, so a replayer maps it back to the malloc that made it.
//
// Lines are formatted by hand into a buffer inside the heap object and written when it fills,
// on flush() and in the destructor; nothing allocates (through this heap or any other), so a
// TraceHeap can serve as the process's malloc when writing to a file descriptor. With a FILE*
// the buffer is passed to fwrite and the stream is flushed with it. A failed write stops the
// trace (ok() turns false) but never the program. Fast path: about 40 bytes of formatting per
// event and, every BufferBytes / 40 events, one write. Not thread-safe.
#pragma once
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "strata/concepts.hpp"
#include "strata/platform/output.hpp"

namespace strata {

template <Heap Super, std::size_t BufferBytes = 8192>
class TraceHeap : public Super {
  static constexpr std::size_t kMaxLine = 64;  // "m " + 20 + " " + 20 + " 0x" + 16 + "\n"
  static_assert(BufferBytes >= 2 * kMaxLine, "TraceHeap: the buffer must hold a few lines");

 public:
  static constexpr std::size_t Alignment = Super::Alignment;

  // Traces to the file descriptor fd, which stays open and belongs to the caller. Further
  // arguments construct Super.
  template <class... Args>
  explicit TraceHeap(int fd, Args&&... args) : Super(static_cast<Args&&>(args)...), fd_(fd) {}

  // Traces to the stream out, which stays open and belongs to the caller.
  template <class... Args>
  explicit TraceHeap(std::FILE* out, Args&&... args)
      : Super(static_cast<Args&&>(args)...), file_(out) {}

  TraceHeap(const TraceHeap&) = delete;
  TraceHeap& operator=(const TraceHeap&) = delete;
  ~TraceHeap() { flush(); }

  void* malloc(std::size_t n) noexcept {
    void* p = Super::malloc(n);
    reserveLine();
    put("m ", 2);
    putDecimal(nextId_++);
    put(" ", 1);
    putDecimal(n);
    put(" ", 1);
    putPointer(p);
    put("\n", 1);
    return p;
  }

  void free(void* p) noexcept {
    if (p == nullptr) return;
    reserveLine();
    put("f ", 2);
    putPointer(p);
    put("\n", 1);
    Super::free(p);
  }

  void clear() noexcept
    requires ClearableHeap<Super>
  {
    Super::clear();
    reserveLine();
    put("c\n", 2);
  }

  // Writes out whatever is buffered. errno is left as it was, so that a malloc's ENOMEM
  // survives a flush.
  void flush() noexcept {
    const int saved = errno;
    if (used_ > 0 && ok_) ok_ = file_ != nullptr ? writeFile() : writeFd();
    used_ = 0;
    errno = saved;
  }

  // False once a write has failed; the trace is then incomplete.
  bool ok() const noexcept { return ok_; }

  // How many mallocs have been traced (the next malloc's id).
  std::uint64_t mallocsTraced() const noexcept { return nextId_; }

 private:
  void reserveLine() noexcept {
    if (BufferBytes - used_ < kMaxLine) flush();
  }
  void put(const char* s, std::size_t n) noexcept {
    std::memcpy(buffer_ + used_, s, n);
    used_ += n;
  }
  void putDecimal(std::uint64_t v) noexcept {
    char digits[20];
    std::size_t i = sizeof digits;
    do {
      digits[--i] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    put(digits + i, sizeof digits - i);
  }
  void putPointer(const void* p) noexcept {
    auto v = reinterpret_cast<std::uintptr_t>(p);
    char digits[2 + 2 * sizeof v];
    std::size_t i = sizeof digits;
    do {
      digits[--i] = "0123456789abcdef"[v & 15];
      v >>= 4;
    } while (v != 0);
    digits[--i] = 'x';
    digits[--i] = '0';
    put(digits + i, sizeof digits - i);
  }

  bool writeFd() noexcept { return platform::writeAll(fd_, buffer_, used_); }
  bool writeFile() noexcept {
    return std::fwrite(buffer_, 1, used_, file_) == used_ && std::fflush(file_) == 0;
  }

  int fd_ = -1;
  std::FILE* file_ = nullptr;
  bool ok_ = true;
  std::uint64_t nextId_ = 0;
  std::size_t used_ = 0;
  char buffer_[BufferBytes];
};

}  // namespace strata
