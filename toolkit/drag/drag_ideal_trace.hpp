// The ideal trace of `strata drag`: the program as it would have run had every object been
// freed right after its last use, as a trace `strata replay` and `strata compare` take, so an
// allocator can be measured on the program without its drag.
//
// The same events in the same order (the same creates, so the same ids), except:
//   - an object released early loses its own release (free, delete or reap_free), and a
//     release is written right after its last-use event instead: free for a malloc, calloc,
//     realloc or memalign object, delete for new, reap_free on its reap for a reap object;
//     an object whose own release already follows its last use keeps it as it was;
//   - objects ended by realloc keep their realloc (its target is then still live), objects
//     the last-use file does not cover keep their release; reap_clear and reap_destroy stay
//     and free what is left; objects live at the end of the trace are freed after their last
//     use like the others;
//   - a Touch of an object released early that came after its last use moves to just before
//     its early release (the last such Touch, if it had several).
// An early release goes on the thread of the event it follows, unless that thread has ended
// (the event was its thread_end; then on the lowest thread live in the ideal trace, or that
// same thread when none is), with that event's time.
//
// Memory: the object pass's (drag_objects.hpp: live ids, sort runs), and the objects released
// early whose end in the original trace is still to come, which are live there. A Touch that
// moves is known before the early release because the object pass notes each object's last
// Touch after its last use in the object's own record.
#pragma once
#include <cstdint>
#include <string>

#include "drag/drag_analysis.hpp"

namespace strata::drag {

struct IdealTraceCounts {
  std::uint64_t events = 0;            // events written
  std::uint64_t earlyReleases = 0;     // releases written after a last use
  std::uint64_t droppedReleases = 0;   // the program's own releases of those objects
  std::uint64_t movedTouches = 0;
};

// Reads the trace at `tracePath` again with `lastUse` (the ones `analysis` came from) and
// writes the ideal trace to `outPath`, with the original's program chunk, sites and modules.
// Temporary files as options.tempDir says. Throws support::Error naming the file that
// cannot be read or written, or when the trace is not the one analysed (its events differ in
// number), or as analyzeDrag does.
IdealTraceCounts writeIdealTrace(const std::string& tracePath, const LastUseData& lastUse,
                                 const DragResult& analysis, const std::string& outPath,
                                 const DragOptions& options = {});

}  // namespace strata::drag
