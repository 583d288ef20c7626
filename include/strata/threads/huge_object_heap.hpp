// HugeObjectHeap: requests above the threshold (by default the largest block a segment's
// page holds), and alignments a block cannot give, get a chunk of their own from the source,
// with a 64-byte header; everything else goes to Super. As SelectMmapHeap does, free and
// getSize route by what the memory is (the chunk's kind word), not by size.
//
// Freed huge chunks of about the right length are reused from a small cache (kept committed,
// as glibc keeps blocks below its mmap threshold): tunables().hugeCacheChunks chunks of at
// most a quarter of hugeCacheBytes, hugeCacheBytes in all. A chunk fresh from the system
// reads as zero, so calloc does not clear it.
//
// Cost on top of Super: a compare on malloc; on free, the chunk lookup Super would need
// anyway and a compare of the chunk's kind.
#pragma once
#include <cerrno>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "strata/detail/align.hpp"
#include "strata/detail/spin_lock.hpp"
#include "strata/threads/accounted_segments.hpp"

namespace strata {

// What HugeObjectHeap needs of its parent: objects up to MaxSize, frees within chunks it
// recognises, and the source's chunk calls.
template <class S>
concept ChunkedObjectHeap = requires(S& s, void* p, std::size_t n) {
  { s.malloc(n) } -> std::same_as<void*>;
  { s.mallocZeroed(n) } -> std::same_as<void*>;
  { s.mallocAlignedIn(n, n) } -> std::same_as<void*>;
  { S::ownsChunk(p) } -> std::same_as<bool>;
  { s.freeIn(p, p) } -> std::same_as<void>;
  { S::getSizeIn(p, p) } -> std::same_as<std::size_t>;
  { s.chunkOf(p) } -> std::same_as<void*>;
  { s.allocChunk(n, n, n) } -> std::same_as<void*>;
  { s.freeChunk(p) } -> std::same_as<void>;
  { S::MaxSize } -> std::convertible_to<std::size_t>;
  { S::MaxSmall } -> std::convertible_to<std::size_t>;
};

template <ChunkedObjectHeap Super>
class HugeObjectHeap : public Super {
 public:
  static constexpr std::size_t Alignment = 16;
  static constexpr std::size_t MaxAlign = std::size_t{1} << 30;
  static constexpr std::size_t MaxCacheChunks = 64;

  template <class... A>
  explicit HugeObjectHeap(A&&... a) noexcept : Super(static_cast<A&&>(a)...) {
    // Never below MaxSmall: malloc keeps those in Super, so mallocZeroed and memalign must.
    const std::size_t t = Super::tunables().hugeThreshold;
    threshold_ = t == 0 || t > Super::MaxSize ? Super::MaxSize : t < Super::MaxSmall ? Super::MaxSmall : t;
  }

  // Requests above threshold() have a chunk of their own.
  std::size_t threshold() const noexcept { return threshold_; }

  void* malloc(std::size_t n) noexcept {
    if (n <= Super::MaxSmall || n <= threshold_) [[likely]] return Super::malloc(n);
    return mallocHuge(n, Alignment, nullptr);
  }

  // n bytes that read as zero.
  void* mallocZeroed(std::size_t n) noexcept {
    if (n <= threshold_) return Super::mallocZeroed(n);
    bool fresh = false;
    void* p = mallocHuge(n, Alignment, &fresh);
    if (p != nullptr && !fresh) std::memset(p, 0, n);
    return p;
  }

  void free(void* p) noexcept {
    if (p == nullptr) return;
    void* chunk = Super::chunkOf(p);
    if (chunk == nullptr) return;
    if (Super::ownsChunk(chunk)) [[likely]] {
      Super::freeIn(chunk, p);
      return;
    }
    freeHuge(chunk, p);
  }

  // Usable bytes from p to the end of its block; 0 for nullptr and foreign pointers.
  std::size_t getSize(void* p) const noexcept {
    if (p == nullptr) return 0;
    void* chunk = Super::chunkOf(p);
    if (chunk == nullptr) return 0;
    if (Super::ownsChunk(chunk)) return Super::getSizeIn(chunk, p);
    auto* h = static_cast<Header*>(chunk);
    if (h->kind != kHugeKind || addr(p) != addr(chunk) + h->objectOffset) return 0;
    return Super::chunkSize(chunk) - h->objectOffset;
  }

  // n bytes aligned to align (a power of two up to 1 GiB); nullptr with errno = EINVAL for
  // a bad alignment, ENOMEM when out of memory.
  void* memalign(std::size_t align, std::size_t n) noexcept {
    if (!detail::is_pow2(align) || align > MaxAlign) {
      errno = EINVAL;
      return nullptr;
    }
    if (align <= Alignment) return malloc(n);
    std::size_t need;
    if (detail::checked_add(n, align - Alignment, need) && need <= threshold_)
      return Super::mallocAlignedIn(align, need);
    return mallocHuge(n, align, nullptr);
  }

  // p resized to n bytes without moving, or nullptr (p untouched) when the block is too
  // small, or so much larger than n that moving saves memory.
  void* reallocInPlace(void* p, std::size_t n) noexcept {
    const std::size_t usable = getSize(p);
    if (usable == 0 || n > usable) return nullptr;
    if (n < usable / 2 && usable > 64) return nullptr;
    return p;
  }

  // Empties what the calling thread may (Super::trimHeaps), the huge cache and the source's
  // cached segments. 1 if anything went back.
  int trim(std::size_t = 0) noexcept {
    const std::size_t before = Super::committed();
    Super::trimHeaps();
    const std::size_t unmapped = Super::trimChunks() + dropCache();
    return unmapped > 0 || Super::committed() < before ? 1 : 0;
  }

  void prepareFork() noexcept {
    lock_.lock();
    Super::prepareFork();
  }
  void parentAfterFork() noexcept {
    Super::parentAfterFork();
    lock_.unlock();
  }
  void childAfterFork() noexcept {
    Super::childAfterFork();
    lock_.unlock();
  }

 private:
  static constexpr std::uintptr_t kHugeKind = 0x4a6e4a6e;
  static constexpr std::size_t kHeaderBytes = 64;

  struct Header {
    std::size_t chunkHeader[Super::ChunkHeaderBytes / sizeof(std::size_t)];
    std::uintptr_t kind;
    std::size_t objectOffset;
  };
  static_assert(sizeof(Header) <= kHeaderBytes);

  static std::uintptr_t addr(const void* p) noexcept { return reinterpret_cast<std::uintptr_t>(p); }

  // A cached chunk that fits, else a new one; *fresh (if asked) says it reads as zero.
  [[gnu::noinline]] void* mallocHuge(std::size_t n, std::size_t align, bool* fresh) noexcept {
    const std::size_t seg = Super::SegmentSize;
    const std::size_t offset = align < seg ? detail::align_up(kHeaderBytes, align) : seg;
    std::size_t total;
    if (!detail::checked_add(n, offset, total)) {
      errno = ENOMEM;
      return nullptr;
    }
    void* chunk = align < seg ? takeCached(total) : nullptr;
    if (fresh != nullptr) *fresh = chunk == nullptr;
    if (chunk == nullptr) {
      chunk = align < seg ? Super::allocChunk(total, seg, 0) : Super::allocChunk(total, align, seg);
      if (chunk == nullptr) return nullptr;
      Super::commit(Super::chunkSize(chunk));
    }
    auto* h = static_cast<Header*>(chunk);
    h->kind = kHugeKind;
    h->objectOffset = offset;
    Super::addInUse(Super::chunkSize(chunk) - offset);
    return static_cast<std::byte*>(chunk) + offset;
  }

  [[gnu::noinline]] void freeHuge(void* chunk, void* p) noexcept {
    auto* h = static_cast<Header*>(chunk);
    if (h->kind != kHugeKind || addr(p) != addr(chunk) + h->objectOffset) return;
    const std::size_t len = Super::chunkSize(chunk);
    Super::subInUse(len - h->objectOffset);
    h->kind = 0;  // from here on free(p) and getSize(p) ignore it
    const StrataTunables& t = Super::tunables();
    const std::size_t maxChunks = t.hugeCacheChunks < MaxCacheChunks ? t.hugeCacheChunks : MaxCacheChunks;
    lock_.lock();
    const bool keep = count_ < maxChunks && len <= t.hugeCacheBytes / 4 && bytes_ + len <= t.hugeCacheBytes;
    if (keep) {
      cache_[count_++] = chunk;
      bytes_ += len;
    }
    lock_.unlock();
    if (keep) return;
    Super::uncommit(len);
    Super::freeChunk(chunk);
  }

  // The cached chunk that fits `total` bytes most tightly, if one is at most twice as long.
  void* takeCached(std::size_t total) noexcept {
    lock_.lock();
    std::size_t best = MaxCacheChunks;
    for (std::size_t i = 0; i < count_; ++i) {
      const std::size_t len = Super::chunkSize(cache_[i]);
      if (len >= total && len - total <= total &&
          (best == MaxCacheChunks || len < Super::chunkSize(cache_[best])))
        best = i;
    }
    void* chunk = nullptr;
    if (best != MaxCacheChunks) {
      chunk = cache_[best];
      cache_[best] = cache_[--count_];
      bytes_ -= Super::chunkSize(chunk);
    }
    lock_.unlock();
    return chunk;
  }

  // Unmaps the cached chunks; the bytes that went back.
  std::size_t dropCache() noexcept {
    void* drop[MaxCacheChunks];
    lock_.lock();
    const std::size_t n = count_;
    for (std::size_t i = 0; i < n; ++i) drop[i] = cache_[i];
    count_ = 0;
    bytes_ = 0;
    lock_.unlock();
    std::size_t total = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t len = Super::chunkSize(drop[i]);
      total += len;
      Super::uncommit(len);
      Super::freeChunk(drop[i]);
    }
    return total;
  }

  std::size_t threshold_ = 0;
  SpinLock lock_;
  std::size_t count_ = 0;
  std::size_t bytes_ = 0;
  void* cache_[MaxCacheChunks] = {};
};

}  // namespace strata
