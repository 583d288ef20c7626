// SbrkHeap: contiguous growth, like the program break, emulated over a reserved range of
// address space so the real break is never moved (glibc and others own it).
//
// malloc bumps the break: an add, a compare and (rarely) an mprotect to commit more of the
// reservation. free does nothing; as with sbrk, memory comes back only all at once, through
// clear() or the destructor. Consecutive mallocs are adjacent, which CoalesceableHeap uses
// to merge blocks across top-heap requests.
#pragma once
#include <cerrno>
#include <cstddef>

#include "strata/detail/align.hpp"
#include "strata/platform/memory.hpp"
#include "strata/top/memory_account.hpp"

namespace strata {

// ReserveBytes: the most this heap can ever hold (address space only, nothing committed).
// CommitStep: the granularity at which the reservation is made accessible.
// A process whose address space is limited (RLIMIT_AS, `ulimit -v`) may not get ReserveBytes
// at once: the reservation is then halved until it fits (down to one CommitStep), and the
// heap holds at most what it got, instead of refusing every request. It keeps that smaller
// reservation if the limit is raised later: the range cannot grow in place.
template <std::size_t ReserveBytes = (std::size_t{16} << 30),
          std::size_t CommitStep = (std::size_t{1} << 20)>
class SbrkHeap : public AccountedTop {
  static_assert(detail::is_pow2(CommitStep), "CommitStep must be a power of two");
  static_assert(ReserveBytes % CommitStep == 0, "ReserveBytes must be a multiple of CommitStep");

 public:
  static constexpr std::size_t Alignment = 16;

  SbrkHeap() = default;
  SbrkHeap(const SbrkHeap&) = delete;
  SbrkHeap& operator=(const SbrkHeap&) = delete;
  ~SbrkHeap() {
    if (base_ != nullptr) {
      refund(brk_);
      platform::unmap(base_, reserved_);
    }
  }

  void* malloc(std::size_t n) noexcept {
    // brk_ and ReserveBytes are multiples of Alignment, so n fits iff align_up(n) does.
    if (n > ReserveBytes - brk_) return outOfMemory();
    const std::size_t need = detail::align_up(n, Alignment);
    if ((brk_ + need > committed_ || base_ == nullptr) && !grow(brk_ + need))
      return outOfMemory();
    void* p = base_ + brk_;
    brk_ += need;
    charge(need);
    return p;
  }

  // Single objects cannot be returned to a break; layers above keep and reuse them.
  void free(void*) noexcept {}

  // Gives every byte back: the break returns to the start and the pages are released.
  void clear() noexcept {
    if (base_ == nullptr) return;
    refund(brk_);
    platform::decommit(base_, committed_, platform::Decommit::Now);
    brk_ = 0;
  }

  // The current break: where the next malloc will start.
  void* top() const noexcept { return base_ + brk_; }

 private:
  [[gnu::cold, gnu::noinline]] static void* outOfMemory() noexcept {
    errno = ENOMEM;
    return nullptr;
  }
  // Reserves on first use and commits up to `upto`: the rare part of malloc, out of line.
  [[gnu::cold, gnu::noinline]] bool grow(std::size_t upto) noexcept {
    if (base_ == nullptr && !reserve()) return false;
    return upto <= committed_ || commit(upto);
  }
  bool reserve() noexcept {
    for (std::size_t size = ReserveBytes; size >= CommitStep;
         size = size / 2 / CommitStep * CommitStep) {
      void* p = platform::reserve(size);
      if (p != nullptr) {
        base_ = static_cast<std::byte*>(p);
        reserved_ = size;
        return true;
      }
    }
    return false;
  }
  bool commit(std::size_t upto) noexcept {
    const std::size_t target = detail::align_up(upto, CommitStep);
    if (target > reserved_) return false;
    if (!platform::commit(base_ + committed_, target - committed_)) return false;
    committed_ = target;
    return true;
  }

  std::byte* base_ = nullptr;
  std::size_t brk_ = 0;
  std::size_t committed_ = 0;
  std::size_t reserved_ = 0;  // what reserve() got: ReserveBytes, or less under a limit
};

}  // namespace strata
