// ProfileHeap: statistics about how a program uses a heap, and how much the heap beneath
// wastes: live bytes and objects (now and at peak), malloc and free counts, a power-of-two
// histogram of request sizes, and fragmentation.
//
// Fragmentation is the paper's measure: the peak of memory the top heaps held from the system
// over the peak of live bytes, minus one (0 = no waste; 1 = twice what was needed). The peak
// held is Super's peakBytesHeld() when Super is an AccountedHeap. Otherwise ProfileHeap reads
// the process account (processAccount()) after each of its mallocs and keeps the highest
// value above what was held when it was constructed: exact when this heap is the only one
// growing meanwhile.
//
// ProfileHeap must know each object's size when it is freed. ProfileSize chooses how:
//  - Requested (the default): a 16-byte header of its own holds the size asked for, so live
//    bytes are exactly what the program requested; the header (and the parent's rounding of
//    the larger block) count as waste. Works over any Heap.
//  - Usable: Super::getSize(p), with no header, so the profiled heap sees exactly the
//    program's requests; live bytes are then usable bytes, and the parent's rounding (internal
//    fragmentation) is not counted as waste. Needs a SizedHeap.
// Fast path: a handful of adds and compares per malloc or free (plus the header store).
// Not thread-safe (put a LockedHeap above it).
#pragma once
#include <array>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdio>

#include "strata/concepts.hpp"
#include "strata/detail/align.hpp"
#include "strata/top/memory_account.hpp"

namespace strata {

enum class ProfileSize { Requested, Usable };

struct ProfileStats {
  // Request sizes by power of two: bucket k counts requests n with 2^(k-1) < n <= 2^k;
  // bucket 0 counts n <= 1.
  static constexpr unsigned kBuckets = 65;
  static constexpr std::size_t bucketLimit(unsigned k) noexcept { return std::size_t{1} << k; }
  static constexpr unsigned bucketOf(std::size_t n) noexcept {
    return n <= 1 ? 0u : static_cast<unsigned>(std::bit_width(n - 1));
  }

  std::size_t mallocs = 0;        // successful
  std::size_t failedMallocs = 0;  // returned nullptr
  std::size_t frees = 0;          // of objects (free(nullptr) is not counted)
  std::size_t liveObjects = 0, peakLiveObjects = 0;
  std::size_t liveBytes = 0, peakLiveBytes = 0;
  std::size_t peakBytesHeld = 0;  // by the top heaps beneath
  double fragmentation = 0;       // peakBytesHeld / peakLiveBytes - 1 (0 before any malloc)
  std::array<std::size_t, kBuckets> requestsBySize{};
};

template <Heap Super, ProfileSize Sizes = ProfileSize::Requested>
  requires(Sizes == ProfileSize::Requested || SizedHeap<Super>)
class ProfileHeap : public Super {
  static constexpr bool kHeader = Sizes == ProfileSize::Requested;
  static_assert(Super::Alignment >= alignof(std::size_t),
                "ProfileHeap: the parent must align objects for a size_t header");

 public:
  static constexpr std::size_t HeaderSize = kHeader ? 16 : 0;
  static constexpr std::size_t Alignment =
      kHeader && Super::Alignment > 16 ? 16 : Super::Alignment;

  using Super::Super;
  ProfileHeap() = default;
  ProfileHeap(const ProfileHeap&) = delete;
  ProfileHeap& operator=(const ProfileHeap&) = delete;

  // Counts the request and, when it succeeds, the new live object.
  void* malloc(std::size_t n) noexcept {
    ++stats_.requestsBySize[ProfileStats::bucketOf(n)];
    void* p = allocate(n);
    if (p == nullptr) {
      ++stats_.failedMallocs;
      return nullptr;
    }
    const std::size_t size = getSize(p);
    ++stats_.mallocs;
    stats_.liveBytes += size;
    if (stats_.liveBytes > stats_.peakLiveBytes) stats_.peakLiveBytes = stats_.liveBytes;
    if (++stats_.liveObjects > stats_.peakLiveObjects) stats_.peakLiveObjects = stats_.liveObjects;
    if constexpr (!AccountedHeap<Super>) {
      const std::size_t held = processAccount().held();
      if (held > baseline_ && held - baseline_ > sampledPeak_) sampledPeak_ = held - baseline_;
    }
    return p;
  }

  void free(void* p) noexcept {
    if (p == nullptr) return;
    ++stats_.frees;
    --stats_.liveObjects;
    stats_.liveBytes -= getSize(p);
    Super::free(kHeader ? detail::bytes(p) - HeaderSize : p);
  }

  // The requested size (Requested) or the parent's usable size (Usable). Cost: one load.
  std::size_t getSize(void* p) noexcept {
    if (p == nullptr) return 0;
    if constexpr (kHeader) {
      return *reinterpret_cast<std::size_t*>(detail::bytes(p) - HeaderSize);
    } else {
      return Super::getSize(p);
    }
  }

  // Every object is gone at once: nothing is live any more.
  void clear() noexcept
    requires ClearableHeap<Super>
  {
    stats_.liveObjects = 0;
    stats_.liveBytes = 0;
    Super::clear();
  }

  // A snapshot, with the peak held and the fragmentation computed now.
  ProfileStats stats() const noexcept {
    ProfileStats s = stats_;
    if constexpr (AccountedHeap<Super>) {
      s.peakBytesHeld = Super::peakBytesHeld();
    } else {
      s.peakBytesHeld = sampledPeak_;
    }
    s.fragmentation =
        s.peakLiveBytes == 0 ? 0.0 : double(s.peakBytesHeld) / double(s.peakLiveBytes) - 1.0;
    return s;
  }

  // Prints the statistics as a short human-readable table.
  void report(std::FILE* out) const {
    const ProfileStats s = stats();
    std::fprintf(out, "strata ProfileHeap (%s sizes)\n",
                 kHeader ? "requested" : "usable");
    std::fprintf(out, "  mallocs %zu (failed %zu), frees %zu\n", s.mallocs, s.failedMallocs,
                 s.frees);
    std::fprintf(out, "  live objects %zu (peak %zu), live bytes %zu (peak %zu)\n",
                 s.liveObjects, s.peakLiveObjects, s.liveBytes, s.peakLiveBytes);
    std::fprintf(out, "  peak held from the system %zu bytes, fragmentation %.1f %%\n",
                 s.peakBytesHeld, 100.0 * s.fragmentation);
    std::fprintf(out, "  requests by size:\n");
    for (unsigned k = 0; k < ProfileStats::kBuckets; ++k) {
      if (s.requestsBySize[k] == 0) continue;
      if (k == 64) {
        std::fprintf(out, "    > 2^63 B: %zu\n", s.requestsBySize[k]);
      } else {
        std::fprintf(out, "    <= %zu B: %zu\n", ProfileStats::bucketLimit(k),
                     s.requestsBySize[k]);
      }
    }
  }

 private:
  void* allocate(std::size_t n) noexcept {
    if constexpr (kHeader) {
      std::size_t total;
      if (!detail::checked_add(n, HeaderSize, total)) {
        errno = ENOMEM;
        return nullptr;
      }
      void* block = Super::malloc(total);
      if (block == nullptr) return nullptr;
      void* p = detail::bytes(block) + HeaderSize;
      *reinterpret_cast<std::size_t*>(block) = n;
      return p;
    } else {
      return Super::malloc(n);
    }
  }

  ProfileStats stats_;
  std::size_t baseline_ = processAccount().held();
  std::size_t sampledPeak_ = 0;
};

}  // namespace strata
