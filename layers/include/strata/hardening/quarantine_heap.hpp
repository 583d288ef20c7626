// QuarantineHeap: freed objects wait before the parent may reuse them, zeroed, and the zero
// is checked when they leave; so a write through a dangling pointer is caught (the object
// is no longer zero), and a use after free meets zeros rather than another object's data or
// the parent's free-list links.
//
// free fills the object's usable bytes with zero, from KeepBytes on (a layer above keeps its
// header in the first KeepBytes: CheckedHeaderHeap's 16, so its "freed" seal survives the
// wait and a double free is named as one), and appends it to the calling thread's shard of
// the quarantine. When a shard holds more than its share of the budget (or its ring is
// full), its oldest objects leave: each is checked to still read as zero and goes back to
// the parent. An object of kDecommitFrom bytes or more is not written: its whole pages go
// back to the system (they read as zero again), and on leaving only the pages that became
// resident again (mincore) are read. Such a big object costs the budget only its partial
// edge pages, so it waits as long as small ones do; at most kBigSlots of them wait per
// shard, which bounds the address space held. A shard no thread has freed into since the last
// look (its threads went quiet or exited) is emptied a few objects at a time by the others:
// every kVisitEvery frees a thread looks at one other shard, so a quiet thread's last
// objects do not stay allocated, pinning its heap's pages, for as long as it stays quiet.
// trim() and checkAll() (a library calls the latter at exit) look at everything waiting.
//
// A layer above that knows how much of the block it used says so (freeUsed: CheckedHeaderHeap
// does); then only those bytes are zeroed and checked, and the parent's size lookup is saved.
//
// A changed byte is reported by reportHeapCorruption (WriteAfterFree at its address). Not
// caught: a write after the object left the quarantine, a write of zeros, a read after free.
// Objects above the options' maxObject, or every object when the budget is 0, go back at
// once. Cost: a fill and a check of each freed object's bytes, a lock and a ring push per
// free (per thread's shard, so threads rarely share a lock), and the budget in memory.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "strata/concepts.hpp"
#include "strata/detail/align.hpp"
#include "strata/detail/spin_lock.hpp"
#include "strata/hardening/corruption.hpp"
#include "strata/platform/memory.hpp"
#include "strata/platform/page.hpp"

namespace strata {

// How much QuarantineHeap holds back.
struct QuarantineOptions {
  std::size_t bytes = std::size_t{256} << 10;     // all shards together; 0 turns it off
  std::size_t maxObject = std::size_t{16} << 10;  // larger objects go back at once
};

namespace detail {
// The calling thread's quarantine shard, plus one (0: not chosen yet), and its count of
// frees (when to look at another shard).
inline thread_local unsigned quarantineShard __attribute__((tls_model("initial-exec"))) = 0;
inline thread_local unsigned quarantineFrees __attribute__((tls_model("initial-exec"))) = 0;
inline std::atomic<unsigned> quarantineThreads{0};
}  // namespace detail

template <SizedHeap Super, std::size_t KeepBytes = 0>
class QuarantineHeap : public Super {
 public:
  static constexpr unsigned kShards = 8;
  static constexpr unsigned kSlots = 512;  // objects a shard holds at most
  static constexpr unsigned kBigSlots = 16;  // decommitted big objects a shard holds at most
  static constexpr std::size_t kDecommitFrom = std::size_t{64} << 10;

  QuarantineHeap() noexcept = default;
  template <class... A>
  explicit QuarantineHeap(const QuarantineOptions& o, A&&... a) noexcept
      : Super(static_cast<A&&>(a)...), options_(o) {}
  QuarantineHeap(const QuarantineHeap&) = delete;
  QuarantineHeap& operator=(const QuarantineHeap&) = delete;
  ~QuarantineHeap() { drain(); }

  const QuarantineOptions& quarantineOptions() const noexcept { return options_; }

  // Zeroes p and queues it; the shard's oldest objects beyond its budget go back, checked.
  void free(void* p) noexcept {
    if (p == nullptr) return;
    if (options_.bytes == 0) return Super::free(p);
    quarantine(p, Super::getSize(p));
  }

  // free, told by the layer above how many bytes of p's block it used (at most the block's
  // usable size): only those are zeroed and checked, and the parent's size lookup is saved.
  void freeUsed(void* p, std::size_t used) noexcept {
    if (options_.bytes == 0) return Super::free(p);
    quarantine(p, used);
  }

  // Checks and gives back everything waiting; then the parent's trim, when it has one.
  int trim(std::size_t pad) noexcept
    requires requires(Super& s) { s.trim(pad); }
  {
    drain();
    return Super::trim(pad);
  }

  // Checks every waiting object (they stay): a write after free not yet found is reported.
  void checkAll() noexcept {
    for (Shard& s : shards_) {
      s.lock.lock();
      for (unsigned i = 0; i < s.count; ++i) {
        const Entry& e = s.ring[(s.head + i) % kSlots];
        verify(static_cast<std::byte*>(e.p), e.usable);
      }
      s.lock.unlock();
    }
  }

  // Bytes waiting in the quarantine.
  std::size_t quarantinedBytes() noexcept {
    std::size_t total = 0;
    for (Shard& s : shards_) {
      s.lock.lock();
      total += s.bytes;
      s.lock.unlock();
    }
    return total;
  }

  // Freeing everything at once would leave the quarantine holding freed memory: not passed on.
  void clear() = delete;

  // Fork: the shards' locks, then the parent's.
  void prepareFork() noexcept {
    for (Shard& s : shards_) s.lock.lock();
    if constexpr (requires(Super& s) { s.prepareFork(); }) Super::prepareFork();
  }
  void parentAfterFork() noexcept {
    if constexpr (requires(Super& s) { s.parentAfterFork(); }) Super::parentAfterFork();
    for (Shard& s : shards_) s.lock.unlock();
  }
  void childAfterFork() noexcept {
    if constexpr (requires(Super& s) { s.childAfterFork(); }) Super::childAfterFork();
    for (Shard& s : shards_) s.lock.unlock();
  }

 private:
  static constexpr unsigned kBatch = 8;  // objects that leave per free at most
  static constexpr unsigned kVisitEvery = 16;  // frees between looks at another shard
  static constexpr std::size_t kInlineBytes = 512;  // zeroed by inline stores up to this

  struct Entry {
    void* p;
    std::size_t usable;
    std::size_t charged;  // the bytes it holds resident: usable, or a big one's edges
  };
  struct alignas(detail::kCacheLine) Shard {
    SpinLock lock;
    unsigned head = 0, count = 0, big = 0;
    std::size_t bytes = 0;
    std::uint64_t pushes = 0, pushesSeen = 0;  // frees into it; what the last look saw
    Entry ring[kSlots];
    void push(const Entry& e) noexcept {
      ring[(head + count) % kSlots] = e;
      ++count;
      ++pushes;
      bytes += e.charged;
      big += e.charged < e.usable;
    }
    Entry pop() noexcept {
      const Entry e = ring[head];
      head = (head + 1) % kSlots;
      --count;
      bytes -= e.charged;
      big -= e.charged < e.usable;
      return e;
    }
  };

  std::size_t share() const noexcept { return options_.bytes / kShards; }

  // Zeroes the first `used` bytes of p (past KeepBytes) and queues it, or gives it back at
  // once when it is too large or too small to wait.
  void quarantine(void* p, std::size_t used) noexcept {
    if (used > options_.maxObject || used <= KeepBytes) {
      Super::free(p);
      return;
    }
    const std::size_t charged = scrub(static_cast<std::byte*>(p), used);
    const unsigned mine = shardIndex();
    Shard& s = shards_[mine];
    Entry out[kBatch];
    unsigned leaving = 0;
    s.lock.lock();
    s.push({p, used, charged});
    while (leaving < kBatch && s.count > 0 &&
           (s.bytes > share() || s.count == kSlots || s.big > kBigSlots))
      out[leaving++] = s.pop();
    s.lock.unlock();
    release(out, leaving);
    const unsigned n = ++detail::quarantineFrees;
    if (n % kVisitEvery == 0) [[unlikely]] visit((mine + 1 + n / kVisitEvery % (kShards - 1)) % kShards);
  }

  // Empties part of shard v when nothing was freed into it since the last look.
  void visit(unsigned v) noexcept {
    Shard& s = shards_[v];
    Entry out[kBatch];
    unsigned leaving = 0;
    if (!s.lock.try_lock()) return;
    if (s.pushes == s.pushesSeen)
      while (leaving < kBatch && s.count > 0) out[leaving++] = s.pop();
    s.pushesSeen = s.pushes;
    s.lock.unlock();
    release(out, leaving);
  }

  static unsigned shardIndex() noexcept {
    unsigned s = detail::quarantineShard;
    if (s == 0) [[unlikely]] {
      s = detail::quarantineThreads.fetch_add(1, std::memory_order_relaxed) % kShards + 1;
      detail::quarantineShard = s;
    }
    return s - 1;
  }

  // The bytes past KeepBytes made zero: written, or for a big object its whole pages given
  // back to the system. Returns the bytes the object still holds resident.
  static std::size_t scrub(std::byte* p, std::size_t usable) noexcept {
    std::byte* from = p + KeepBytes;
    std::byte* end = p + usable;
    if (usable >= kDecommitFrom) {
      std::byte* lo = pageUp(from);
      std::byte* hi = pageDown(end);
      std::memset(from, 0, static_cast<std::size_t>(lo - from));
      std::memset(hi, 0, static_cast<std::size_t>(end - hi));
      if (platform::decommit(lo, static_cast<std::size_t>(hi - lo), platform::Decommit::Now))
        return usable - static_cast<std::size_t>(hi - lo);
    }
    zero(from, end);
    return usable;
  }

  // Zeroes [from, end): 16 bytes a store while both ends are 16-aligned (every object of a
  // 16-aligned heap of a small size), else memset.
  static void zero(std::byte* from, std::byte* end) noexcept {
    const auto n = static_cast<std::size_t>(end - from);
    if (n <= kInlineBytes && detail::is_aligned(from, 16) && n % 16 == 0) {
      using V = long long __attribute__((vector_size(16)));
      for (std::size_t i = 0; i < n; i += 16) {
        V z = {0, 0};
        __builtin_memcpy(from + i, &z, 16);
        asm("" ::: "memory");  // one store each, not a call of memset
      }
      return;
    }
    std::memset(from, 0, n);
  }

  // Reports the first byte past KeepBytes that is not zero (for a big object, reading only
  // its edges and the pages that are resident again).
  static void verify(std::byte* p, std::size_t usable) noexcept {
    std::byte* from = p + KeepBytes;
    std::byte* end = p + usable;
    if (usable < kDecommitFrom) return verifyRange(from, end);
    std::byte* lo = pageUp(from);
    std::byte* hi = pageDown(end);
    verifyRange(from, lo);
    verifyRange(hi, end);
    constexpr std::size_t kPages = 256;
    unsigned char resident[kPages];
    const std::size_t page = platform::kPageSize;
    for (std::byte* at = lo; at < hi; at += kPages * page) {
      const std::size_t len = std::min(static_cast<std::size_t>(hi - at), kPages * page);
      if (!platform::residentPages(at, len, resident)) return verifyRange(at, at + len);
      for (std::size_t i = 0; i < len / page; ++i)
        if ((resident[i] & 1) != 0) verifyRange(at + i * page, at + (i + 1) * page);
    }
  }

  // Reports the first byte of [from, end) that is not zero: 64 bytes a step (four 16-byte
  // loads ORed), then 16, then single bytes; a step that is not all zero is searched bytewise.
  static void verifyRange(const std::byte* from, const std::byte* end) noexcept {
    using V = long long __attribute__((vector_size(16)));
    const std::byte* at = from;
    for (; end - at >= 64; at += 64) {
      V a, b, c, d;
      __builtin_memcpy(&a, at, 16);
      __builtin_memcpy(&b, at + 16, 16);
      __builtin_memcpy(&c, at + 32, 16);
      __builtin_memcpy(&d, at + 48, 16);
      const V x = (a | b) | (c | d);
      if ((x[0] | x[1]) != 0) break;
    }
    for (; end - at >= 16; at += 16) {
      V a;
      __builtin_memcpy(&a, at, 16);
      if ((a[0] | a[1]) != 0) break;
    }
    for (; at < end; ++at)
      if (*at != std::byte{0}) reportHeapCorruption(HeapCorruption::WriteAfterFree, at);
  }

  static std::byte* pageUp(std::byte* p) noexcept {
    return reinterpret_cast<std::byte*>(platform::pageAlignUp(reinterpret_cast<std::uintptr_t>(p)));
  }
  static std::byte* pageDown(std::byte* p) noexcept {
    return reinterpret_cast<std::byte*>(platform::pageAlignDown(reinterpret_cast<std::uintptr_t>(p)));
  }

  // Checks the objects that left and gives them back.
  void release(Entry* out, unsigned n) noexcept {
    for (unsigned i = 0; i < n; ++i) {
      verify(static_cast<std::byte*>(out[i].p), out[i].usable);
      Super::free(out[i].p);
    }
  }

  void drain() noexcept {
    for (Shard& s : shards_) {
      for (;;) {
        Entry out[kBatch];
        unsigned n = 0;
        s.lock.lock();
        while (n < kBatch && s.count > 0) out[n++] = s.pop();
        s.lock.unlock();
        if (n == 0) break;
        release(out, n);
      }
    }
  }

  QuarantineOptions options_{};
  Shard shards_[kShards];
};

}  // namespace strata
