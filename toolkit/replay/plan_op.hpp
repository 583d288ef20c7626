// What the plan decoder (plan.hpp) produces and the replay loop (replay_loop.hpp) walks:
// 16-byte operations, a window of them per replay thread, and the decoder's counts.
#pragma once
#include <cstddef>
#include <cstdint>

#include "replay/own_memory.hpp"

namespace strata::replay {

// What one replay operation does. The replay loop switches on it.
enum class OpKind : std::uint8_t {
  Malloc,
  Calloc,
  Realloc,        // object = the new slot, other = the old one (live, from the malloc family)
  Memalign,       // align = log2 of the alignment
  New,            // operator new (nothrow)
  NewAligned,     // operator new with std::align_val_t(1 << align)
  Free,
  Delete,         // operator delete
  DeleteAligned,  // operator delete with std::align_val_t(1 << align)
  Touch,          // size = bytes to write of the object the next creating operation makes
};

// One operation: 16 bytes, so a window of a million is 16 MB and the loop streams through it.
// word packs the size (48 bits: larger requests cannot succeed on a 48-bit address space),
// the alignment log2 and the kind.
struct PlanOp {
  std::uint64_t word = 0;
  std::uint32_t object = 0;  // the slot of the object created or freed (plan.hpp)
  std::uint32_t other = 0;   // realloc: the old object's slot

  static constexpr std::uint64_t kMaxSize = (std::uint64_t{1} << 48) - 1;
  static PlanOp make(OpKind k, std::uint32_t object, std::uint64_t size = 0,
                     std::uint8_t alignLog2 = 0, std::uint32_t other = 0) noexcept {
    return PlanOp{(size << 16) | (std::uint64_t{alignLog2} << 8) | static_cast<std::uint8_t>(k),
                  object, other};
  }
  OpKind kind() const noexcept { return static_cast<OpKind>(word & 0xff); }
  unsigned alignLog2() const noexcept { return static_cast<unsigned>((word >> 8) & 0xff); }
  std::uint64_t size() const noexcept { return word >> 16; }
};
static_assert(sizeof(PlanOp) == 16);

// The most slots replay hands out (objects live at once, plan.hpp): slots are 32-bit in a
// PlanOp, and the object table (8 bytes a slot) of a trace with more would not fit memory
// anyway. The number of objects a trace makes over its length has no limit.
inline constexpr std::uint64_t kMaxReplaySlots = 0xffffffffu;

// One window of the plan: each replay thread's operations, in trace order, and where the
// window leaves the trace.
struct PlanWindow {
  OwnVector<OwnVector<PlanOp>> ops;      // [replay thread] (lifecycle: [recorded thread])
  OwnVector<std::uint32_t> threads;      // lifecycle: recorded threads with events in the window
  OwnVector<std::uint32_t> started;      // lifecycle: threads that start in the window
  OwnVector<std::uint32_t> ended;        // lifecycle: threads that end in it (after their ops)
  std::uint64_t events = 0;              // trace events consumed by this window
  std::uint64_t endEvent = 0;            // trace events consumed up to the end of this window
  std::uint64_t liveBytesAtEnd = 0;      // live bytes after the window's last event
  std::uint64_t allocatedBytes = 0;      // bytes requested by the window's allocations

  void clear() noexcept {
    if (threads.empty()) {
      for (auto& v : ops) v.clear();
    } else {
      for (const std::uint32_t t : threads) ops[t].clear();
    }
    threads.clear();
    started.clear();
    ended.clear();
    events = 0;
    allocatedBytes = 0;
  }
  std::size_t opCount() const noexcept {
    std::size_t n = 0;
    for (const auto& v : ops) n += v.size();
    return n;
  }
};

// Counts of what the decoder did with the trace's events.
struct PlanCounts {
  std::uint64_t events = 0;         // trace events decoded
  std::uint64_t objects = 0;        // ids handed out (reaps included)
  std::uint64_t liveBytes = 0;      // now
  std::uint64_t peakLiveBytes = 0;  // the maximum over every event so far
  std::uint64_t liveObjects = 0;    // now
  std::uint64_t failedEvents = 0;   // recorded as FAILED: not replayed
  std::uint64_t ignoredFrees = 0;   // frees of an object already freed (or of a reap): skipped
};

}  // namespace strata::replay
