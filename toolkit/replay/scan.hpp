// The pre-pass over a trace before it is replayed: what the decoder needs to know ahead of
// the events it decodes. It reads the whole trace once (the replay reads it again), so it
// also serves as the counting pass for a trace without trailer.
//   - touches: for each large object with a Touch event (version 2), the bytes the program
//     touched, sorted by object id; the decoder consumes them with a cursor as ids are created
//     in increasing order. Memory: one entry per large object.
//   - thread lifecycle: whether the trace has ThreadStart/ThreadEnd events, and the most
//     threads alive at once under the replay's rule (a thread lives from its ThreadStart, or
//     its first event, to its ThreadEnd, or the end of the trace).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "replay/own_memory.hpp"
#include "strata/trace/reader.hpp"

namespace strata::replay {

struct TouchEntry {
  std::uint64_t object = 0;  // the trace's id (not a slot)
  std::uint64_t touched = 0;  // bytes of the object the program touched
};

// Lifecycle replay keeps a few words per thread index; a trace naming thread indexes beyond
// this replays on the pool.
inline constexpr std::uint64_t kMaxLifecycleThreadIndex = std::uint64_t{1} << 16;

struct TraceScan {
  trace::TraceTotals totals;        // events, objects, threads
  OwnVector<TouchEntry> touches;    // sorted by object
  bool threadEvents = false;        // the trace has ThreadStart or ThreadEnd events
  std::uint64_t maxLiveThreads = 0; // the most threads alive at once
  bool threadIndexTooLarge = false; // a thread index >= kMaxLifecycleThreadIndex (not tracked)
  std::string error;                // the reader's message on a bad trace
};

template <class Source>
TraceScan scanTrace(Source src) {
  TraceScan scan;
  trace::TraceReader<Source, OwnAllocator<unsigned char>> r(std::move(src));
  OwnVector<std::uint8_t> live;  // by thread index
  std::uint64_t liveCount = 0;
  trace::Event e;
  trace::ReadStatus s;
  while ((s = r.next(e)) == trace::ReadStatus::Event) {
    if (e.op == trace::Op::Touch && e.object != trace::kNoObject)
      scan.touches.push_back(TouchEntry{e.object, e.size});
    if (e.op == trace::Op::ThreadStart || e.op == trace::Op::ThreadEnd) scan.threadEvents = true;
    if (scan.threadIndexTooLarge) continue;
    if (e.thread >= kMaxLifecycleThreadIndex) {
      scan.threadIndexTooLarge = true;
      continue;
    }
    if (e.thread >= live.size()) live.resize(std::size_t{e.thread} + 1, 0);
    if (e.op == trace::Op::ThreadEnd) {
      if (live[e.thread]) --liveCount;
      live[e.thread] = 0;
      continue;
    }
    if (!live[e.thread]) {
      live[e.thread] = 1;
      scan.maxLiveThreads = std::max(scan.maxLiveThreads, ++liveCount);
    }
  }
  if (s == trace::ReadStatus::Error) scan.error = r.error().message();
  scan.totals = trace::TraceTotals{r.eventsRead(), r.objects(), r.threads()};
  // ThreadStart's target (the creator) can name an index no event uses.
  if (scan.totals.threads > kMaxLifecycleThreadIndex) scan.threadIndexTooLarge = true;
  // Touches come at free time, not creation order: sort, keeping the largest of duplicates.
  std::sort(scan.touches.begin(), scan.touches.end(), [](const TouchEntry& a, const TouchEntry& b) {
    return a.object != b.object ? a.object < b.object : a.touched > b.touched;
  });
  scan.touches.erase(std::unique(scan.touches.begin(), scan.touches.end(),
                                 [](const TouchEntry& a, const TouchEntry& b) {
                                   return a.object == b.object;
                                 }),
                     scan.touches.end());
  return scan;
}

// The format version from a trace's first bytes (0 when too short: the reader will say why).
inline std::uint16_t headerVersion(const unsigned char* data, std::size_t n) noexcept {
  return n >= trace::kFileHeaderSize ? trace::getU16(data + 8) : 0;
}

// The scan a replay needs: a version 1 trace with a trailer needs none (no touches, no
// thread events; the trailer has the totals); any other is read once ahead.
template <class Source>
TraceScan scanIfNeeded(Source src, std::uint16_t version, const std::optional<trace::TraceTotals>& trailer) {
  if (version == 1 && trailer) {
    TraceScan scan;
    scan.totals = *trailer;
    return scan;
  }
  return scanTrace(std::move(src));
}

}  // namespace strata::replay
