// DebugHeap: catches the classic heap bugs when they happen, reports them, and keeps going.
//
//  - double free, and free of a pointer this heap never handed out (or of an interior
//    pointer): reported, and the free is ignored, so the heap stays intact;
//  - buffer overruns and underruns: canary bytes surround each object and are checked on
//    free, and for every object at once by check();
//  - writes after free: freed objects wait in a small quarantine filled with 0xDD, and the
//    fill is checked when they leave it (a double free is recognised while they wait);
//  - new objects are filled with 0xA5, so reading uninitialised memory shows.
//
// An object is laid out as
//     [requested size: 8][front canary: 24][object: n][tail canary: 16 .. 31]
// so the object starts 16-aligned and its slot (n rounded up to 16) is followed by at least
// 16 canary bytes; a one-byte overrun always lands on a canary. getSize returns n.
//
// Live and quarantined objects are found through an open-addressing table (pointer ->
// requested size) whose array comes from the parent heap, so no pointer is ever dereferenced
// before the table vouches for it, and the heap under test is never used for bookkeeping.
// An object whose canaries or fill were damaged is reported and then kept out of circulation
// (never given back to the parent), because the damage may reach beyond it.
//
// Limits: a double free is recognised while the object is in quarantine; later it reads as an
// invalid free, or goes unnoticed if the parent has handed the same block out again. Not
// thread-safe (put a LockedHeap above it). Every operation costs O(n) in the object size.
#pragma once
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "strata/concepts.hpp"
#include "strata/detail/align.hpp"
#include "strata/platform/output.hpp"

namespace strata {

// What DebugHeap found.
enum class DebugError {
  DoubleFree,      // free of an object already freed (still in quarantine)
  InvalidFree,     // free of a pointer this heap did not hand out
  InteriorFree,    // free of a pointer into the middle of an object
  Overrun,         // a canary after the object was overwritten
  Underrun,        // a canary (or the size word) before the object was overwritten
  WriteAfterFree,  // a quarantined object's 0xDD fill changed
};

// One finding, handed to the report handler. `message` is one line without a newline, e.g.
// "strata DebugHeap: double free of 0x5555d0a0 (48 bytes, allocated as 40)": the address,
// the object's slot (its request rounded up to 16) and the size it was allocated with.
struct DebugReport {
  DebugError error;
  void* pointer;          // the pointer given to free, or the damaged object (check)
  void* object;           // the object concerned; nullptr when there is none (InvalidFree)
  std::size_t size;       // the object's slot: its request rounded up to 16
  std::size_t requested;  // the size the object was allocated with
  std::ptrdiff_t offset;  // first damaged byte, from the object's start (negative: before
                          // it); for InteriorFree, how far into the object the pointer was
  const char* message;
};

// Called for every finding. `context` is the pointer given with the handler.
using DebugReportHandler = void (*)(const DebugReport& report, void* context);

// The default handler: the message as one line on standard error, written from a stack
// buffer so that reporting never allocates (DebugHeap may be the process's malloc).
inline void writeDebugReportToStderr(const DebugReport& report, void*) noexcept {
  char line[320];
  const int len = std::snprintf(line, sizeof line, "%s\n", report.message);
  if (len <= 0) return;
  std::size_t n = static_cast<std::size_t>(len);
  if (n >= sizeof line) n = sizeof line - 1;
  platform::writeStderr(line, n);
}

// QuarantineObjects: how many freed objects wait (filled with 0xDD) before going back to the
// parent; 0 gives them back at once and only catches double frees as invalid frees.
template <Heap Super, std::size_t QuarantineObjects = 64>
class DebugHeap : public Super {
  static_assert(Super::Alignment >= 16, "DebugHeap: the parent must align objects to 16 bytes");

 public:
  static constexpr std::size_t Alignment = 16;
  static constexpr std::size_t HeaderSize = 32;  // size word + 24 front canary bytes
  static constexpr std::size_t TailCanary = 16;  // at least; the slot's slack is canary too
  static constexpr unsigned char kNewFill = 0xA5;
  static constexpr unsigned char kFreedFill = 0xDD;
  static constexpr unsigned char kCanary = 0xCB;

  using Super::Super;
  DebugHeap() = default;
  DebugHeap(const DebugHeap&) = delete;
  DebugHeap& operator=(const DebugHeap&) = delete;
  ~DebugHeap() {
    if constexpr (QuarantineObjects > 0)
      while (quarantined_ > 0) evictOldest();
    if (slots_ != nullptr) Super::free(slots_);
  }

  // Takes a block with room for the canaries, fills the object with 0xA5 and the canaries,
  // and records the object. Cost: the parent's malloc, a table insert, and n + 48 bytes of
  // stores.
  void* malloc(std::size_t n) noexcept {
    std::size_t slot, total;
    if (!detail::checked_align_up(n, 16, slot) ||
        !detail::checked_add(slot, HeaderSize + TailCanary, total) || !reserveEntry()) {
      errno = ENOMEM;
      return nullptr;
    }
    std::byte* block = static_cast<std::byte*>(Super::malloc(total));
    if (block == nullptr) return nullptr;
    std::byte* p = block + HeaderSize;
    std::memcpy(block, &n, sizeof n);
    std::memset(block + sizeof n, kCanary, HeaderSize - sizeof n);
    std::memset(p, kNewFill, n);
    std::memset(p + n, kCanary, slot - n + TailCanary);
    insert(reinterpret_cast<std::uintptr_t>(p), n);
    return p;
  }

  // Checks the pointer against the table and the object's canaries, fills it with 0xDD and
  // puts it in quarantine (the oldest quarantined object goes back to the parent).
  // Cost: a table lookup, n + 48 bytes of loads and n bytes of stores.
  void free(void* p) noexcept {
    if (p == nullptr) return;
    Entry* e = find(p);
    if (e == nullptr) {
      reportStranger(p);
      return;
    }
    if (e->freed()) {
      report(DebugError::DoubleFree, p, p, e->requested, 0);
      return;
    }
    if (const Damage d = inspect(p, e->requested, false); d.found) {
      report(d.error, p, p, e->requested, d.offset);
      retire(e);
      return;
    }
    std::memset(p, kFreedFill, e->requested);
    if constexpr (QuarantineObjects == 0) {
      erase(e);
      Super::free(detail::bytes(p) - HeaderSize);
    } else {
      e->key |= kFreedBit;
      if (quarantined_ == QuarantineObjects) evictOldest();
      quarantine_[(oldest_ + quarantined_) % QuarantineObjects] = p;
      ++quarantined_;
    }
  }

  // The size the object was allocated with. Cost: one load. Deliberately not static: the
  // size word is DebugHeap's own, not the shared header word, and HybridHeap takes a static
  // getSize as the sign of that shared header.
  std::size_t getSize(void* p) const noexcept {
    std::size_t n = 0;
    if (p != nullptr) std::memcpy(&n, detail::bytes(p) - HeaderSize, sizeof n);
    return n;
  }

  // Walks every live and quarantined object and reports each damaged one (once per call).
  // Returns how many were damaged. Cost: O(table size + bytes of all objects).
  std::size_t check() noexcept {
    std::size_t damaged = 0;
    for (std::size_t i = 0; slots_ != nullptr && i <= mask_; ++i) {
      const Entry& e = slots_[i];
      if (e.key == 0) continue;
      void* p = e.object();
      if (const Damage d = inspect(p, e.requested, e.freed()); d.found) {
        report(d.error, p, p, e.requested, d.offset);
        ++damaged;
      }
    }
    return damaged;
  }

  // Frees every object at once: forgets the table and the quarantine, then clears the parent
  // (whose memory the table lived in).
  void clear() noexcept
    requires ClearableHeap<Super>
  {
    slots_ = nullptr;
    mask_ = count_ = 0;
    oldest_ = quarantined_ = 0;
    Super::clear();
  }

  // The parent's other ways to allocate or resize (memalign, mallocZeroed, reallocInPlace,
  // reallocMoving, mallocFromBins) would hand out or resize objects without their header and
  // canaries, behind the table's back: DebugHeap hides them, so adapters above (MallocShim,
  // SelectMmapHeap) fall back to malloc, copy and free, which DebugHeap checks.
  void* memalign(std::size_t, std::size_t) = delete;
  void* mallocZeroed(std::size_t) = delete;
  void* reallocInPlace(void*, std::size_t) = delete;
  void* reallocMoving(void*, std::size_t) = delete;
  void* mallocFromBins(std::size_t) = delete;

  // Routes reports to `handler` (nullptr: back to standard error).
  void setReportHandler(DebugReportHandler handler, void* context = nullptr) noexcept {
    handler_ = handler != nullptr ? handler : &writeDebugReportToStderr;
    context_ = context;
  }

  std::size_t liveObjects() const noexcept { return count_ - quarantined_; }
  std::size_t quarantinedObjects() const noexcept { return quarantined_; }
  std::size_t errorsReported() const noexcept { return errors_; }

 private:
  static constexpr std::uintptr_t kFreedBit = 1;  // objects are 16-aligned: low bits are free
  static constexpr std::size_t kInitialSlots = 256;

  // A table slot: the object's address (plus kFreedBit while quarantined; 0 = empty slot)
  // and the size it was allocated with.
  struct Entry {
    std::uintptr_t key;
    std::size_t requested;
    bool freed() const noexcept { return (key & kFreedBit) != 0; }
    std::uintptr_t address() const noexcept { return key & ~std::uintptr_t{15}; }
    void* object() const noexcept { return reinterpret_cast<void*>(address()); }
  };

  struct Damage {
    bool found = false;
    DebugError error = DebugError::Overrun;
    std::ptrdiff_t offset = 0;
  };

  // Fibonacci hashing of the address without its always-zero low bits.
  std::size_t home(std::uintptr_t a) const noexcept {
    return static_cast<std::size_t>(((a >> 4) * 0x9E3779B97F4A7C15ull) >> 20) & mask_;
  }

  Entry* find(const void* p) const noexcept {
    if (slots_ == nullptr) return nullptr;
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    for (std::size_t i = home(a);; i = (i + 1) & mask_) {
      if (slots_[i].key == 0) return nullptr;
      if (slots_[i].key == a || slots_[i].key == (a | kFreedBit)) return &slots_[i];
    }
  }

  // Makes sure one more entry fits with the table at most half full; grows it from the
  // parent heap by doubling. False when the parent has no memory for it.
  bool reserveEntry() noexcept {
    if (slots_ != nullptr && (count_ + 1) * 2 <= mask_ + 1) return true;
    const std::size_t capacity = slots_ == nullptr ? kInitialSlots : 2 * (mask_ + 1);
    std::size_t bytes;
    if (!detail::checked_mul(capacity, sizeof(Entry), bytes)) return false;
    auto* fresh = static_cast<Entry*>(Super::malloc(bytes));
    if (fresh == nullptr) return false;
    std::memset(static_cast<void*>(fresh), 0, bytes);
    Entry* old = slots_;
    const std::size_t oldCapacity = old == nullptr ? 0 : mask_ + 1;
    slots_ = fresh;
    mask_ = capacity - 1;
    count_ = 0;
    for (std::size_t i = 0; i < oldCapacity; ++i)
      if (old[i].key != 0) place(old[i]);
    if (old != nullptr) Super::free(old);
    return true;
  }

  void place(const Entry& e) noexcept {
    std::size_t i = home(e.address());
    while (slots_[i].key != 0) i = (i + 1) & mask_;
    slots_[i] = e;
    ++count_;
  }

  void insert(std::uintptr_t a, std::size_t requested) noexcept { place(Entry{a, requested}); }

  // Linear-probing deletion by backward shift: later entries of the same probe run move up,
  // so lookups never need tombstones.
  void erase(Entry* e) noexcept {
    std::size_t hole = static_cast<std::size_t>(e - slots_);
    for (std::size_t j = (hole + 1) & mask_; slots_[j].key != 0; j = (j + 1) & mask_) {
      const std::size_t h = home(slots_[j].address());
      // The entry at j may fill the hole unless its home lies cyclically in (hole, j].
      const bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
      if (!stays) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].key = 0;
    --count_;
  }

  // Forgets a damaged object without giving it back: what lies past it may be damaged too.
  void retire(Entry* e) noexcept { erase(e); }

  // Returns the oldest quarantined object to the parent, unless it was written after free.
  // Only instantiated when there is a quarantine.
  void evictOldest() noexcept {
    void* p = quarantine_[oldest_];
    oldest_ = (oldest_ + 1) % QuarantineObjects;
    --quarantined_;
    Entry* e = find(p);
    if (const Damage d = inspect(p, e->requested, true); d.found) {
      report(d.error, p, p, e->requested, d.offset);
      retire(e);
      return;
    }
    erase(e);
    Super::free(detail::bytes(p) - HeaderSize);
  }

  // Looks for damage around (and, for a freed object, inside) the object: the tail canary
  // first, then the front canary nearest the object outwards, then the size word.
  Damage inspect(void* p, std::size_t n, bool freed) const noexcept {
    const auto* b = static_cast<const unsigned char*>(p);
    if (freed) {
      for (std::size_t i = 0; i < n; ++i)
        if (b[i] != kFreedFill) return {true, DebugError::WriteAfterFree, std::ptrdiff_t(i)};
    }
    const std::size_t end = detail::align_up(n, 16) + TailCanary;
    for (std::size_t i = n; i < end; ++i)
      if (b[i] != kCanary) return {true, DebugError::Overrun, std::ptrdiff_t(i)};
    for (std::ptrdiff_t i = -1; i >= -std::ptrdiff_t(HeaderSize - sizeof(std::size_t)); --i)
      if (b[i] != kCanary) return {true, DebugError::Underrun, i};
    if (getSize(p) != n) return {true, DebugError::Underrun, -std::ptrdiff_t(HeaderSize)};
    return {};
  }

  // A pointer the table does not know: an interior pointer if it falls inside a known
  // object (found by a scan: this is the error path), otherwise foreign.
  void reportStranger(void* p) noexcept {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    for (std::size_t i = 0; slots_ != nullptr && i <= mask_; ++i) {
      const Entry& e = slots_[i];
      if (e.key != 0 && e.address() < a && a < e.address() + e.requested) {
        report(DebugError::InteriorFree, p, e.object(), e.requested,
               static_cast<std::ptrdiff_t>(a - e.address()));
        return;
      }
    }
    report(DebugError::InvalidFree, p, nullptr, 0, 0);
  }

  void report(DebugError error, void* pointer, void* object, std::size_t requested,
              std::ptrdiff_t offset) noexcept {
    ++errors_;
    const std::size_t size = detail::align_up(requested, 16);
    char msg[256];
    switch (error) {
      case DebugError::DoubleFree:
        std::snprintf(msg, sizeof msg,
                      "strata DebugHeap: double free of %p (%zu bytes, allocated as %zu)",
                      pointer, size, requested);
        break;
      case DebugError::InvalidFree:
        std::snprintf(msg, sizeof msg,
                      "strata DebugHeap: invalid free of %p (not allocated by this heap, or "
                      "freed long ago)",
                      pointer);
        break;
      case DebugError::InteriorFree:
        std::snprintf(msg, sizeof msg,
                      "strata DebugHeap: invalid free of %p: interior pointer, %td bytes into "
                      "%p (%zu bytes, allocated as %zu)",
                      pointer, offset, object, size, requested);
        break;
      case DebugError::Overrun:
        std::snprintf(msg, sizeof msg,
                      "strata DebugHeap: buffer overrun of %p (%zu bytes, allocated as %zu): "
                      "canary at offset %td overwritten",
                      object, size, requested, offset);
        break;
      case DebugError::Underrun:
        std::snprintf(msg, sizeof msg,
                      "strata DebugHeap: buffer underrun of %p (%zu bytes, allocated as %zu): "
                      "header at offset %td overwritten",
                      object, size, requested, offset);
        break;
      case DebugError::WriteAfterFree:
        std::snprintf(msg, sizeof msg,
                      "strata DebugHeap: write after free of %p (%zu bytes, allocated as %zu): "
                      "byte at offset %td changed",
                      object, size, requested, offset);
        break;
    }
    handler_(DebugReport{error, pointer, object, object ? size : 0, requested, offset, msg},
             context_);
  }

  Entry* slots_ = nullptr;
  std::size_t mask_ = 0;   // table capacity - 1 (capacity is a power of two)
  std::size_t count_ = 0;  // live + quarantined objects in the table
  std::array<void*, QuarantineObjects> quarantine_{};
  std::size_t oldest_ = 0;
  std::size_t quarantined_ = 0;
  std::size_t errors_ = 0;
  DebugReportHandler handler_ = &writeDebugReportToStderr;
  void* context_ = nullptr;
};

}  // namespace strata
