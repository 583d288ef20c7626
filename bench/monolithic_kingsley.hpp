// MonolithicKingsley: the Kingsley allocator written by hand as one plain class, the yardstick
// for the abstraction penalty of strata::KingsleyHeap<strata::SbrkHeap<>>.
//
// Same algorithm and the same data layout as the layered heap, byte for byte:
//   - 44 power-of-two classes, 16 B .. 2^47 B; a request is rounded up to its class;
//   - one singly linked free list per class, threaded through the freed objects;
//   - every object has a 16-byte header whose last word holds its class size (the shared
//     header word of strata/detail/header.hpp), so free finds the class;
//   - a miss bumps a break through a 16 GiB PROT_NONE reservation that is made accessible
//     with mprotect in 1 MiB steps; nothing is returned before destruction;
//   - what is bumped is charged to the heap's own MemoryAccount and to processAccount(),
//     exactly as SbrkHeap does;
//   - fields in the layered heap's order: account, base, break, committed, 44 list heads.
// Given the same requests, both heaps return the same addresses relative to their base;
// bench/abstraction_penalty.cpp checks that before it times anything.
#pragma once
#include <sys/mman.h>

#include <bit>
#include <cerrno>
#include <cstddef>

#include "strata/top/memory_account.hpp"

namespace strata::bench {

class MonolithicKingsley {
 public:
  static constexpr std::size_t Alignment = 16;
  static constexpr unsigned kBins = 44;
  static constexpr std::size_t kHeaderSize = 16;
  static constexpr std::size_t kMaxClassSize = std::size_t{1} << (kBins - 1 + 4);
  static constexpr std::size_t kReserveBytes = std::size_t{16} << 30;
  static constexpr std::size_t kCommitStep = std::size_t{1} << 20;

  MonolithicKingsley() = default;
  MonolithicKingsley(const MonolithicKingsley&) = delete;
  MonolithicKingsley& operator=(const MonolithicKingsley&) = delete;

  // Everything lives in the reservation, so giving it back is one munmap.
  ~MonolithicKingsley() {
    if (base_ != nullptr) {
      refund(brk_);
      ::munmap(base_, kReserveBytes);
    }
  }

  // Fast path (the class's list is not empty): a compare, a bit-width, two loads and a store.
  void* malloc(std::size_t n) noexcept {
    if (n <= kMaxClassSize) {
      const unsigned c = n <= 16 ? 0u : static_cast<unsigned>(std::bit_width(n - 1)) - 4;
      if (Node* p = heads_[c]) {
        heads_[c] = p->next;
        return p;
      }
      return carve(std::size_t{16} << c);
    }
    // Beyond the last class: as is, rounded to 16, when the reservation has room.
    if (n > kReserveBytes) {
      errno = ENOMEM;
      return nullptr;
    }
    return carve((n + 15) & ~std::size_t{15});
  }

  // Fast path: a load of the header, a count of trailing zeros and two stores.
  void free(void* p) noexcept {
    if (p == nullptr) return;
    const std::size_t size = header(p) & ~std::size_t{15};
    if (size > kMaxClassSize) return;  // a break cannot take one object back
    Node* node = static_cast<Node*>(p);
    const unsigned c = static_cast<unsigned>(std::countr_zero(size)) - 4;
    node->next = heads_[c];
    heads_[c] = node;
  }

  static std::size_t getSize(void* p) noexcept {
    return p ? header(p) & ~std::size_t{15} : 0;
  }

  std::size_t bytesHeld() const noexcept { return own_.held(); }
  std::size_t peakBytesHeld() const noexcept { return own_.peak(); }

 private:
  struct Node {
    Node* next;
  };

  static std::size_t& header(void* p) noexcept {
    return *(reinterpret_cast<std::size_t*>(p) - 1);
  }

  // Bumps the break by a header plus `usable` bytes (a multiple of 16, at most the
  // reservation) and writes the header. Cost: an add, two compares, a store, and the
  // accounting; an mmap the first time and an mprotect every CommitStep bytes.
  void* carve(std::size_t usable) noexcept {
    const std::size_t need = usable + kHeaderSize;
    if (need > kReserveBytes - brk_) return outOfMemory();
    if ((brk_ + need > committed_ || base_ == nullptr) && !grow(brk_ + need))
      return outOfMemory();
    std::byte* block = base_ + brk_;
    brk_ += need;
    charge(need);
    void* p = block + kHeaderSize;
    header(p) = usable;
    return p;
  }

  // The rare paths, out of line as a careful hand-writer would put them.
  [[gnu::cold, gnu::noinline]] static void* outOfMemory() noexcept {
    errno = ENOMEM;
    return nullptr;
  }
  [[gnu::cold, gnu::noinline]] bool grow(std::size_t upto) noexcept {
    if (base_ == nullptr && !reserve()) return false;
    return upto <= committed_ || commit(upto);
  }

  bool reserve() noexcept {
    void* p = ::mmap(nullptr, kReserveBytes, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return false;
    base_ = static_cast<std::byte*>(p);
    return true;
  }

  bool commit(std::size_t upto) noexcept {
    const std::size_t target = (upto + kCommitStep - 1) & ~(kCommitStep - 1);
    if (::mprotect(base_ + committed_, target - committed_, PROT_READ | PROT_WRITE) != 0)
      return false;
    committed_ = target;
    return true;
  }

  void charge(std::size_t n) noexcept {
    own_.charge(n);
    processAccount().charge(n);
  }
  void refund(std::size_t n) noexcept {
    own_.refund(n);
    processAccount().refund(n);
  }

  MemoryAccount own_;
  std::byte* base_ = nullptr;
  std::size_t brk_ = 0;
  std::size_t committed_ = 0;
  Node* heads_[kBins] = {};
};

}  // namespace strata::bench
