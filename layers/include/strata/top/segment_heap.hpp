// SegmentHeap: chunks of address space aligned to SegmentSize (4 MiB by default), straight
// from mmap, with a segment map that finds the chunk holding any address in O(1).
//
// Why: an allocator built on aligned segments finds an object's metadata from the object's
// address alone (mimalloc's segments, Hoard's superblocks), so objects need no header and a
// free from any thread knows where the object belongs. The segment map (two levels, one
// entry per SegmentSize of address space, leaves mapped on first use) also tells pointers
// that are not ours apart: chunkOf(p) is nullptr for them. chunkOf costs two dependent loads.
//
// Every chunk starts with a HeaderBytes-byte header the heap keeps (the chunk's length);
// users lay out their own data after it. Freed single-segment chunks are kept in a small
// cache (decommitted with MADV_DONTNEED, still mapped) so that a program whose footprint
// swings does not pay three system calls per segment; trim() unmaps the cache. Chunks stay
// registered in the map while cached (their user data is gone, so users must mark a chunk as
// free before giving it back, see SegmentSlots). Thread-safe: the map is updated with
// atomics, the cache is behind a spin lock. Addresses at or above 2^48 are never handed
// out (an mmap there is returned and the request fails).
#pragma once
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "strata/detail/align.hpp"
#include "strata/detail/spin_lock.hpp"
#include "strata/platform/memory.hpp"
#include "strata/platform/page.hpp"
#include "strata/top/memory_account.hpp"

namespace strata {

template <unsigned SegmentShift = 22, unsigned CacheSegments = 4>
class SegmentHeap : public AccountedTop {
 public:
  static constexpr std::size_t SegmentSize = std::size_t{1} << SegmentShift;
  static constexpr std::size_t Alignment = SegmentSize;
  static constexpr std::size_t HeaderBytes = 16;
  static constexpr std::size_t OsPage = platform::kPageSize;
  // Largest chunk: keeps every length computation far from overflow.
  static constexpr std::size_t MaxChunk = std::size_t{1} << 46;

  SegmentHeap() = default;
  SegmentHeap(const SegmentHeap&) = delete;
  SegmentHeap& operator=(const SegmentHeap&) = delete;

  // Unmaps every chunk still registered, then the map itself.
  ~SegmentHeap() {
    for (std::size_t i = 0; i < kL1Entries; ++i) {
      Leaf* leaf = l1_[i].load(std::memory_order_acquire);
      if (leaf == nullptr) continue;
      for (std::size_t j = 0; j < kLeafEntries; ++j) {
        const std::uintptr_t base = leaf->entry[j].load(std::memory_order_relaxed);
        const std::uintptr_t unit = ((i << kLeafBits) | j) << SegmentShift;
        if (base != 0 && base == unit) {
          const std::size_t len = chunkLength(reinterpret_cast<void*>(base));
          refund(len);
          platform::unmap(reinterpret_cast<void*>(base), len);
        }
      }
      platform::unmap(leaf, sizeof(Leaf));
    }
  }

  // A chunk of at least n bytes (rounded up to OS pages), aligned to SegmentSize, or nullptr
  // with errno = ENOMEM. Cost: a cache pop under the lock for n <= SegmentSize when the
  // cache has one, otherwise mmap + two munmap trims and one map store per segment covered.
  void* malloc(std::size_t n) noexcept {
    if (n <= SegmentSize) {
      if (void* base = popCache()) return base;
      return mapChunk(SegmentSize, SegmentSize, 0);
    }
    return mallocAligned(n, SegmentSize, 0);
  }

  // A chunk of at least n bytes whose base is SegmentSize-aligned and base + offset is
  // align-aligned (align a power of two >= SegmentSize, offset a multiple of SegmentSize
  // below align), or nullptr with errno = ENOMEM.
  void* mallocAligned(std::size_t n, std::size_t align, std::size_t offset) noexcept {
    std::size_t len;
    if (n > MaxChunk || !detail::checked_align_up(n, OsPage, len) || align > MaxChunk) {
      errno = ENOMEM;
      return nullptr;
    }
    return mapChunk(len, align < SegmentSize ? SegmentSize : align, offset);
  }

  // Gives a chunk back: a single-segment chunk goes to the cache (decommitted), anything
  // else is unregistered and unmapped. A pointer that is not a chunk base is ignored.
  void free(void* base) noexcept {
    if (base == nullptr || chunkOf(base) != base) return;
    const std::size_t len = chunkLength(base);
    if (len == SegmentSize && pushCache(base)) return;
    unmapChunk(base, len);
  }

  // The chunk at base grown to at least n bytes, its pages moved rather than copied (mremap):
  // in place when the address space after it is free, else to a new SegmentSize-aligned
  // place. Returns the new base, or nullptr (the chunk untouched) when n is not larger or
  // the system refuses. Cost: one or two system calls, no page faults for the moved pages.
  void* growChunk(void* base, std::size_t n) noexcept {
    const std::size_t old = chunkLength(base);
    std::size_t len;
    if (n > MaxChunk || !detail::checked_align_up(n, OsPage, len) || len <= old) return nullptr;
    const auto b = reinterpret_cast<std::uintptr_t>(base);
    void* moved = base;
    if (platform::resizeInPlace(base, old, len)) {
      const std::uintptr_t firstNew = ((b + old - 1) >> SegmentShift) + 1;
      const std::uintptr_t last = (b + len - 1) >> SegmentShift;
      for (std::uintptr_t u = firstNew; u <= last; ++u) {
        Leaf* leaf = ((u << SegmentShift) >> kAddressBits) == 0 ? leafFor(u) : nullptr;
        if (leaf == nullptr) {  // cannot register it: back to the old length
          for (std::uintptr_t v = firstNew; v < u; ++v) setEntries(v << SegmentShift, 1, 0);
          platform::resizeInPlace(base, len, old);
          return nullptr;
        }
        leaf->entry[u & (kLeafEntries - 1)].store(b, std::memory_order_release);
      }
    } else {
      void* target = reserve(len);
      if (target == nullptr) return nullptr;
      const auto t = reinterpret_cast<std::uintptr_t>(target);
      if (!registerChunk(t, len)) {
        platform::unmap(target, len);
        return nullptr;
      }
      moved = platform::remapTo(base, old, len, target);
      if (moved == nullptr) {
        setEntries(t, ((t + len - 1) >> SegmentShift) - (t >> SegmentShift) + 1, 0);
        platform::unmap(target, len);
        return nullptr;
      }
      setEntries(b, ((b + old - 1) >> SegmentShift) - (b >> SegmentShift) + 1, 0);
    }
    chunkLength(moved) = len;
    charge(len - old);
    return moved;
  }

  // The chunk at base cut to n bytes (rounded up to OS pages) where it is: the pages past
  // them are unmapped and the segments they covered leave the map. False, the chunk
  // untouched, when that is not shorter than it is. Cost: one munmap.
  bool shrinkChunk(void* base, std::size_t n) noexcept {
    const std::size_t old = chunkLength(base);
    std::size_t len;
    if (n < HeaderBytes || !detail::checked_align_up(n, OsPage, len) || len >= old) return false;
    const auto b = reinterpret_cast<std::uintptr_t>(base);
    const std::uintptr_t firstGone = ((b + len - 1) >> SegmentShift) + 1;
    const std::uintptr_t last = (b + old - 1) >> SegmentShift;
    if (last >= firstGone) setEntries(firstGone << SegmentShift, last - firstGone + 1, 0);
    platform::unmap(static_cast<std::byte*>(base) + len, old - len);
    chunkLength(base) = len;
    refund(old - len);
    return true;
  }

  // The chunk's length in bytes (base must come from malloc).
  static std::size_t getSize(void* base) noexcept { return base ? chunkLength(base) : 0; }

  // The base of the chunk holding p, or nullptr when p is in no chunk of this heap.
  void* chunkOf(const void* p) const noexcept {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    if ((a >> kAddressBits) != 0) return nullptr;
    const std::uintptr_t unit = a >> SegmentShift;
    const Leaf* leaf = l1_[unit >> kLeafBits].load(std::memory_order_acquire);
    if (leaf == nullptr) return nullptr;
    return reinterpret_cast<void*>(
        leaf->entry[unit & (kLeafEntries - 1)].load(std::memory_order_relaxed));
  }

  // Unmaps the cached segments; returns how many bytes went back.
  std::size_t trim() noexcept {
    void* drop[CacheSegments];
    unsigned n = 0;
    cacheLock_.lock();
    while (cached_ > 0) drop[n++] = cache_[--cached_];
    cacheLock_.unlock();
    for (unsigned i = 0; i < n; ++i) unmapChunk(drop[i], SegmentSize);
    return std::size_t{n} * SegmentSize;
  }

  // For fork: the only lock this heap takes.
  void lockAll() noexcept { cacheLock_.lock(); }
  void unlockAll() noexcept { cacheLock_.unlock(); }

 private:
  static constexpr unsigned kAddressBits = 48;
  static constexpr unsigned kLeafBits = 14;
  static constexpr std::size_t kLeafEntries = std::size_t{1} << kLeafBits;
  static constexpr std::size_t kL1Entries = std::size_t{1} << (kAddressBits - SegmentShift - kLeafBits);
  static_assert(kAddressBits > SegmentShift + kLeafBits);

  struct Leaf {
    std::atomic<std::uintptr_t> entry[kLeafEntries];
  };

  static std::size_t& chunkLength(void* base) noexcept {
    return *static_cast<std::size_t*>(base);
  }

  // Maps len bytes at a base aligned as mallocAligned describes, and registers it. The
  // mapping is accounted (no MAP_NORESERVE), as glibc's are: the kernel's overcommit policy
  // refuses what it would refuse glibc (by default, one mapping larger than RAM and swap),
  // so a program probing for memory with absurd requests sees ENOMEM at once, as under
  // glibc, instead of terabytes of address space registered segment by segment.
  void* mapChunk(std::size_t len, std::size_t align, std::size_t offset) noexcept {
    std::size_t total;
    if (!detail::checked_add(len, align, total)) {
      errno = ENOMEM;
      return nullptr;
    }
    void* raw = platform::map(total);
    if (raw == nullptr) {
      errno = ENOMEM;
      return nullptr;
    }
    const auto r = reinterpret_cast<std::uintptr_t>(raw);
    const std::uintptr_t base = detail::align_up(r + offset, align) - offset;
    trimMapping(r, total, base, len);
    void* b = reinterpret_cast<void*>(base);
    if (((base + len - 1) >> kAddressBits) != 0 || !registerChunk(base, len)) {
      platform::unmap(b, len);
      errno = ENOMEM;
      return nullptr;
    }
    chunkLength(b) = len;
    charge(len);
    return b;
  }

  // len bytes of address space at a SegmentSize-aligned base (mapped and accounted as
  // mapChunk's, not registered), or nullptr.
  void* reserve(std::size_t len) noexcept {
    std::size_t total;
    if (!detail::checked_add(len, SegmentSize, total)) return nullptr;
    void* raw = platform::map(total);
    if (raw == nullptr) return nullptr;
    const auto r = reinterpret_cast<std::uintptr_t>(raw);
    const std::uintptr_t base = detail::align_up(r, SegmentSize);
    trimMapping(r, total, base, len);
    if (((base + len - 1) >> kAddressBits) != 0) {
      platform::unmap(reinterpret_cast<void*>(base), len);
      return nullptr;
    }
    return reinterpret_cast<void*>(base);
  }

  // Unmaps what lies before base and after base + len in the mapping [raw, raw + total):
  // the over-sized mapping cut down to the aligned chunk inside it.
  static void trimMapping(std::uintptr_t raw, std::size_t total, std::uintptr_t base,
                          std::size_t len) noexcept {
    if (base > raw) platform::unmap(reinterpret_cast<void*>(raw), base - raw);
    if (raw + total > base + len)
      platform::unmap(reinterpret_cast<void*>(base + len), raw + total - base - len);
  }

  // Points every map entry the chunk covers at its base; false when a leaf cannot be mapped.
  bool registerChunk(std::uintptr_t base, std::size_t len) noexcept {
    for (std::uintptr_t u = base >> SegmentShift; u <= (base + len - 1) >> SegmentShift; ++u) {
      Leaf* leaf = leafFor(u);
      if (leaf == nullptr) {
        setEntries(base, u - (base >> SegmentShift), 0);
        return false;
      }
      leaf->entry[u & (kLeafEntries - 1)].store(base, std::memory_order_release);
    }
    return true;
  }

  // Sets the map entries of the first `units` segments of the chunk at base to value.
  void setEntries(std::uintptr_t base, std::size_t units, std::uintptr_t value) noexcept {
    for (std::size_t k = 0; k < units; ++k) {
      const std::uintptr_t u = (base >> SegmentShift) + k;
      Leaf* leaf = l1_[u >> kLeafBits].load(std::memory_order_acquire);
      if (leaf) leaf->entry[u & (kLeafEntries - 1)].store(value, std::memory_order_release);
    }
  }

  void unmapChunk(void* base, std::size_t len) noexcept {
    const auto b = reinterpret_cast<std::uintptr_t>(base);
    setEntries(b, ((b + len - 1) >> SegmentShift) - (b >> SegmentShift) + 1, 0);
    refund(len);
    platform::unmap(base, len);
  }

  // The leaf for unit u, mapped and installed with a CAS on first use.
  Leaf* leafFor(std::uintptr_t u) noexcept {
    std::atomic<Leaf*>& slot = l1_[u >> kLeafBits];
    Leaf* leaf = slot.load(std::memory_order_acquire);
    if (leaf) return leaf;
    void* m = platform::map(sizeof(Leaf));
    if (m == nullptr) return nullptr;
    Leaf* fresh = static_cast<Leaf*>(m);
    if (slot.compare_exchange_strong(leaf, fresh, std::memory_order_acq_rel)) return fresh;
    platform::unmap(m, sizeof(Leaf));
    return leaf;
  }

  void* popCache() noexcept {
    cacheLock_.lock();
    void* base = cached_ > 0 ? cache_[--cached_] : nullptr;
    cacheLock_.unlock();
    return base;
  }

  // Decommits all but the first page of a free segment and caches it, if there is room.
  bool pushCache(void* base) noexcept {
    platform::decommit(detail::bytes(base) + OsPage, SegmentSize - OsPage,
                       platform::Decommit::Now);
    cacheLock_.lock();
    const bool room = cached_ < CacheSegments;
    if (room) cache_[cached_++] = base;
    cacheLock_.unlock();
    return room;
  }

  std::atomic<Leaf*> l1_[kL1Entries] = {};
  SpinLock cacheLock_;
  unsigned cached_ = 0;
  void* cache_[CacheSegments] = {};
};

}  // namespace strata
