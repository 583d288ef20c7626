// MallocHeap: a thin layer over the C library's malloc. The usable size the C library
// reports is what is charged, so bytesHeld() counts what the program really has.
#pragma once
#include <malloc.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "strata/top/memory_account.hpp"

namespace strata {

class MallocHeap : public AccountedTop {
 public:
  static constexpr std::size_t Alignment = alignof(std::max_align_t);

  MallocHeap() = default;
  MallocHeap(const MallocHeap&) = delete;
  MallocHeap& operator=(const MallocHeap&) = delete;

  void* malloc(std::size_t n) noexcept {
    // No object may exceed PTRDIFF_MAX; checking here keeps huge requests out of libc.
    void* p = n <= PTRDIFF_MAX ? std::malloc(n) : nullptr;
    if (p == nullptr) {
      errno = ENOMEM;
      return nullptr;
    }
    charge(::malloc_usable_size(p));
    return p;
  }

  void free(void* p) noexcept {
    if (p == nullptr) return;
    refund(::malloc_usable_size(p));
    std::free(p);
  }

  std::size_t getSize(void* p) const noexcept { return p ? ::malloc_usable_size(p) : 0; }
};

}  // namespace strata
