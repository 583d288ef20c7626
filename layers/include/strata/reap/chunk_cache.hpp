// ReapChunkSource: where a tree of reaps gets its chunks. The root of the tree keeps the
// chunks its reaps give back (at clear or destroy) on a cache, one list per chunk size class,
// and hands them out again before asking Top: a program that builds and drops regions phase
// after phase (a compiler, a server's per-request regions) reuses the same, already faulted
// chunks instead of giving them back to malloc, which trims the top of its heap and faults
// it in again next phase (APR's allocator keeps its free blocks in the same way).
//
// Sharing: every reap starts as the root of its own tree; joinParent(parent) makes it use
// the root of parent's tree (NestedHeap::createChild calls it), so a tree shares one cache
// and one Top. A tree is single-threaded, like its reaps: no locking.
//
// Lists: one per size class, 8 KiB << k times 4/4, 5/4, 6/4 or 7/4 (four per doubling) up to
// 1 GiB; a chunk goes on the list of the class its size rounds down to, and a request is
// served only by a chunk of exactly its size, looked for among the first kScan of its list.
// (ReapChunkHeap's chunk sizes recur exactly: each is a function of the ones before it.)
// Chunks under 8 KiB or over the last class are not cached.
//
// Bounds: the cache never holds more than cacheLimit() bytes (kReapCacheLimit unless set),
// and the tree never holds more from Top, in chunks in use plus cached, than the peak of
// its chunks in use: a request the cache cannot serve that makes the total exceed that peak
// first gives cached chunks back to Top. "Given back" for a reap therefore means given to
// its tree's cache; the cache goes back to Top when the root is destroyed, or at once with
// trimCache().
//
// Built with AddressSanitizer, cached chunks are poisoned past their 16-byte link.
// Cost: a class computation and a list pop or push per chunk; nothing per object. The list
// heads are set up on the root's first cached chunk: a child (which never uses its own)
// does not pay for clearing them.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>

#include "strata/concepts.hpp"
#include "strata/detail/poison.hpp"

namespace strata {

inline constexpr std::size_t kReapCacheLimit = std::size_t{64} << 20;

struct ReapChunkClasses {
  static constexpr std::size_t kMin = std::size_t{8} << 10;
  static_assert(kMin == std::size_t{1} << 13, "of() shifts by log2(kMin / 4) = 11");
  static constexpr unsigned kCount = 4 * 17;  // 8 KiB .. 1 GiB (exclusive)
  static constexpr std::size_t kMax = (kMin << (kCount / 4 - 1)) / 4 * 7;

  static constexpr std::size_t size(unsigned c) noexcept {
    return (kMin << (c / 4)) / 4 * (4 + c % 4);
  }
  // The largest class not above n; false when n is under the first class or n >= 1 GiB.
  static constexpr bool of(std::size_t n, unsigned& c) noexcept {
    if (n < kMin || n >= (kMin << (kCount / 4))) return false;
    const unsigned o = static_cast<unsigned>(std::bit_width(n)) - 14;
    const std::size_t base = kMin << o;  // a quarter of it is 1 << (o + 11): a shift, no divide
    c = 4 * o + static_cast<unsigned>((n - base) >> (o + 11));
    return true;
  }
};

template <Heap Top>
class ReapChunkSource : public Top {
 public:
  static constexpr std::size_t Alignment = Top::Alignment;
  static_assert(Alignment >= 16, "ReapChunkSource: Top must align to 16");

  using Top::Top;
  ReapChunkSource() = default;
  ReapChunkSource(const ReapChunkSource&) = delete;
  ReapChunkSource& operator=(const ReapChunkSource&) = delete;
  ~ReapChunkSource() {
    if (root_ == nullptr) trimCache();
  }

  // From now on chunks come from, and go back to, the root of parent's tree. Only before
  // this source has handed out anything.
  void joinParent(ReapChunkSource& parent) noexcept {
    root_ = parent.root_ != nullptr ? parent.root_ : &parent;
  }

  // A chunk of n bytes: a cached one of n's class, else Top's.
  void* malloc(std::size_t n) noexcept { return root().take(n); }
  // Gives back p, a chunk of n bytes (what malloc was asked for): to the cache if it has room.
  void free(void* p, std::size_t n) noexcept {
    if (p != nullptr) root().give(p, n);
  }
  // Unsized: straight to the root's Top (never cached).
  void free(void* p) noexcept { root().Top::free(p); }

  // Gives every cached chunk back to Top.
  void trimCache() noexcept {
    ReapChunkSource& r = root();
    if (r.cached_ == 0) return;
    for (unsigned c = 0; c < ReapChunkClasses::kCount; ++c) {
      while (r.lists_[c] != nullptr) r.evict(c);
    }
  }

  // Bytes in the tree's cache; bytes of its chunks in use; their peak.
  std::size_t cachedBytes() const noexcept { return root().cached_; }
  std::size_t chunksInUse() const noexcept { return root().inUse_; }
  std::size_t peakChunksInUse() const noexcept { return root().peak_; }
  std::size_t cacheLimit() const noexcept { return root().limit_; }
  // A new bound on the cache (0: no caching); trims it down to that at once.
  void setCacheLimit(std::size_t bytes) noexcept {
    ReapChunkSource& r = root();
    r.limit_ = bytes;
    if (r.cached_ == 0) return;
    for (unsigned c = 0; c < ReapChunkClasses::kCount && r.cached_ > bytes; ++c) {
      while (r.lists_[c] != nullptr && r.cached_ > bytes) r.evict(c);
    }
  }

 private:
  static constexpr unsigned kScan = 8;
  struct Link {
    Link* next;
    std::size_t size;
  };

  ReapChunkSource& root() noexcept { return root_ != nullptr ? *root_ : *this; }
  const ReapChunkSource& root() const noexcept { return root_ != nullptr ? *root_ : *this; }

  void* take(std::size_t n) noexcept {
    unsigned c;
    if (cached_ != 0 && ReapChunkClasses::of(n, c)) {
      Link** at = &lists_[c];
      for (unsigned i = 0; i < kScan && *at != nullptr; ++i, at = &(*at)->next) {
        Link* l = *at;
        if (l->size != n) continue;
        *at = l->next;
        cached_ -= n;
        inUse_ += n;
        detail::unpoison(l, n);
        return l;
      }
    }
    void* p = Top::malloc(n);
    if (p == nullptr && cached_ != 0) {
      trimCache();
      p = Top::malloc(n);
    }
    if (p == nullptr) return nullptr;
    inUse_ += n;
    if (inUse_ > peak_) peak_ = inUse_;
    // Keep in use + cached <= peak in use: cached chunks of other classes go back.
    for (unsigned k = 0; cached_ != 0 && k < ReapChunkClasses::kCount && cached_ + inUse_ > peak_; ++k) {
      while (lists_[k] != nullptr && cached_ + inUse_ > peak_) evict(k);
    }
    return p;
  }

  void give(void* p, std::size_t n) noexcept {
    inUse_ -= n;
    unsigned c;
    if (!ReapChunkClasses::of(n, c) || cached_ + n > limit_) {
      Top::free(p);
      return;
    }
    if (!listsReady_) [[unlikely]] initLists();
    auto* l = static_cast<Link*>(p);
    l->next = lists_[c];
    l->size = n;
    lists_[c] = l;
    cached_ += n;
    detail::poison(reinterpret_cast<std::byte*>(l) + 16, n - 16);
  }

  [[gnu::noinline]] void initLists() noexcept {
    for (auto& l : lists_) l = nullptr;
    listsReady_ = true;
  }

  void evict(unsigned c) noexcept {
    Link* l = lists_[c];
    lists_[c] = l->next;
    const std::size_t n = l->size;
    cached_ -= n;
    detail::unpoison(l, n);
    Top::free(l);
  }

  ReapChunkSource* root_ = nullptr;  // nullptr: this is the root
  // Used in the root only.
  std::size_t cached_ = 0;
  std::size_t inUse_ = 0;
  std::size_t peak_ = 0;
  std::size_t limit_ = kReapCacheLimit;
  bool listsReady_ = false;  // lists_ is set up (on the first chunk cached; cached_ != 0 implies it)
  Link* lists_[ReapChunkClasses::kCount];
};

}  // namespace strata
