// StaticBufferHeap: bump allocation through a buffer inside the heap object itself, for
// programs that must not call the system at all (embedded, signal handlers, early start-up).
// free does nothing, clear() starts over; once the buffer is used up malloc returns nullptr.
#pragma once
#include <cerrno>
#include <cstddef>

#include "strata/detail/align.hpp"
#include "strata/top/memory_account.hpp"

namespace strata {

template <std::size_t Bytes>
class StaticBufferHeap : public AccountedTop {
 public:
  static constexpr std::size_t Alignment = 16;

  StaticBufferHeap() = default;
  StaticBufferHeap(const StaticBufferHeap&) = delete;
  StaticBufferHeap& operator=(const StaticBufferHeap&) = delete;
  ~StaticBufferHeap() { refund(used_); }

  void* malloc(std::size_t n) noexcept {
    std::size_t need;
    if (!detail::checked_align_up(n, Alignment, need) || need > Bytes - used_) {
      errno = ENOMEM;
      return nullptr;
    }
    void* p = buffer_ + used_;
    used_ += need;
    charge(need);
    return p;
  }

  void free(void*) noexcept {}

  void clear() noexcept {
    refund(used_);
    used_ = 0;
  }

  std::size_t capacity() const noexcept { return Bytes; }

 private:
  alignas(Alignment) std::byte buffer_[Bytes];
  std::size_t used_ = 0;
};

}  // namespace strata
