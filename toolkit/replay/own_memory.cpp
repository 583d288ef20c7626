// The replayer's own memory (own_memory.hpp): mmap for large requests, power-of-two size
// classes carved from mapped chunks for small ones (reap bookkeeping, short vectors), and a
// registry of every mapping so their resident bytes can be counted with mincore.
#include "replay/own_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <cstring>

#include "strata/platform/memory.hpp"
#include "strata/platform/page.hpp"

namespace strata::replay {
namespace {

using platform::kPageSize;
constexpr std::size_t kMinClass = 16;            // smallest small request
constexpr std::size_t kLargeFrom = 64 * 1024;    // requests from here get their own mapping
constexpr std::size_t kChunkBytes = 1 << 20;     // small classes are carved from these
constexpr unsigned kClasses = 13;                // 16 B, 32 B, ... 64 KiB

struct Mapping {
  std::uintptr_t addr;
  std::size_t len;
};

// Everything below is guarded by gLock (allocation is rare: tables grow geometrically).
std::atomic_flag gLock = ATOMIC_FLAG_INIT;
Mapping* gMaps = nullptr;  // itself a registered mapping once it exists
std::size_t gMapCount = 0, gMapCapacity = 0;
std::atomic<std::uint64_t> gMappingsMade{0};
void* gFree[kClasses] = {};                     // free list per class (next pointer in block)
unsigned char* gChunkCursor = nullptr;          // bump pointer in the current chunk
unsigned char* gChunkEnd = nullptr;

struct Guard {
  Guard() noexcept {
    while (gLock.test_and_set(std::memory_order_acquire)) {
    }
  }
  ~Guard() { gLock.clear(std::memory_order_release); }
};

std::size_t roundPages(std::size_t n) noexcept { return platform::pageAlignUp(n); }

void* mapRaw(std::size_t len) {
  void* p = platform::map(len);
  if (p == nullptr) throw std::bad_alloc();
  gMappingsMade.fetch_add(1, std::memory_order_relaxed);
  return p;
}

// Adds a mapping to the registry, growing the registry (a mapping of its own) when full.
void registerMapping(void* p, std::size_t len) {
  if (gMapCount == gMapCapacity) {
    const std::size_t cap = gMapCapacity == 0 ? kPageSize / sizeof(Mapping) : gMapCapacity * 2;
    auto* next = static_cast<Mapping*>(mapRaw(roundPages(cap * sizeof(Mapping))));
    if (gMaps != nullptr) std::memcpy(next, gMaps, gMapCount * sizeof(Mapping));
    Mapping* old = gMaps;
    const std::size_t oldLen = roundPages(gMapCapacity * sizeof(Mapping));
    gMaps = next;
    gMapCapacity = cap;
    if (old != nullptr) platform::unmap(old, oldLen);
  }
  gMaps[gMapCount++] = Mapping{reinterpret_cast<std::uintptr_t>(p), len};
}

void unregisterMapping(void* p) noexcept {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  for (std::size_t i = 0; i < gMapCount; ++i)
    if (gMaps[i].addr == a) {
      gMaps[i] = gMaps[--gMapCount];
      return;
    }
}

unsigned classOf(std::size_t bytes) noexcept {
  const std::size_t n = bytes < kMinClass ? kMinClass : std::bit_ceil(bytes);
  return static_cast<unsigned>(std::countr_zero(n) - std::countr_zero(kMinClass));
}

// Resident bytes of [addr, addr + len) by mincore, a 16 MiB piece at a time.
std::uint64_t residentOf(std::uintptr_t addr, std::size_t len) noexcept {
  static unsigned char vec[4096];
  std::uint64_t pages = 0;
  for (std::size_t off = 0; off < len; off += sizeof vec * kPageSize) {
    const std::size_t piece =
        len - off < sizeof vec * kPageSize ? len - off : sizeof vec * kPageSize;
    if (::mincore(reinterpret_cast<void*>(addr + off), piece, vec) != 0) continue;
    const std::size_t n = (piece + kPageSize - 1) / kPageSize;
    for (std::size_t i = 0; i < n; ++i) pages += vec[i] & 1;
  }
  return pages * kPageSize;
}

}  // namespace

void* ownAllocate(std::size_t bytes) {
  Guard g;
  if (bytes >= kLargeFrom) {
    const std::size_t len = roundPages(bytes);
    void* p = mapRaw(len);
    try {
      registerMapping(p, len);
    } catch (...) {
      platform::unmap(p, len);
      throw;
    }
    return p;
  }
  const unsigned c = classOf(bytes);
  if (void* p = gFree[c]) {
    std::memcpy(&gFree[c], p, sizeof(void*));
    return p;
  }
  const std::size_t size = kMinClass << c;
  // Blocks are aligned to their size (up to a page), so an over-aligned type (alignas(64)
  // counters) is aligned whatever was carved before it.
  const std::size_t align = size < kPageSize ? size : kPageSize;
  if (gChunkCursor != nullptr) {
    const auto at = reinterpret_cast<std::uintptr_t>(gChunkCursor);
    gChunkCursor += ((at + align - 1) & ~(align - 1)) - at;
  }
  if (gChunkCursor == nullptr || gChunkCursor > gChunkEnd ||
      static_cast<std::size_t>(gChunkEnd - gChunkCursor) < size) {
    void* chunk = mapRaw(kChunkBytes);
    registerMapping(chunk, kChunkBytes);
    gChunkCursor = static_cast<unsigned char*>(chunk);
    gChunkEnd = gChunkCursor + kChunkBytes;
  }
  void* p = gChunkCursor;
  gChunkCursor += size;
  return p;
}

void ownDeallocate(void* p, std::size_t bytes) noexcept {
  if (p == nullptr) return;
  Guard g;
  if (bytes >= kLargeFrom) {
    unregisterMapping(p);
    platform::unmap(p, roundPages(bytes));
    return;
  }
  const unsigned c = classOf(bytes);
  std::memcpy(p, &gFree[c], sizeof(void*));
  gFree[c] = p;
}

std::uint64_t ownResidentBytes() noexcept {
  Guard g;
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < gMapCount; ++i) total += residentOf(gMaps[i].addr, gMaps[i].len);
  if (gMaps != nullptr)
    total += residentOf(reinterpret_cast<std::uintptr_t>(gMaps),
                        roundPages(gMapCapacity * sizeof(Mapping)));
  return total;
}

std::uint64_t ownMappingsMade() noexcept { return gMappingsMade.load(std::memory_order_relaxed); }

}  // namespace strata::replay
