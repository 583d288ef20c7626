// Drag (`strata drag`, the reaps paper's section 7.3): how much memory a program holds after
// its last use. From a trace and its last-use file (drag_last_use.hpp), in allocation time
// (the clock is the bytes requested by every successful creating event up to and including
// the current one, the paper's x axis), each object's creation, last use and end; the live
// bytes as the program ran and as they would be were each object freed right after its last
// use; their areas, whose ratio is the drag; and the drag by allocation site.
//
// Rules: an object's last use is never before its creation; an object ended by realloc was
// in use up to that realloc (its data moves on); an object the last-use file does not cover
// (a crash cut the file short) counts as in use until it ends, so it adds no drag. Objects
// live when the trace ends end at its final clock. Reap objects end at their reap_free, or at
// the reap_clear / reap_destroy that frees them (the trace's reap membership decides; the
// file's release seq is only cross-checked).
//
// Memory is bounded by the objects live at a time, not by the run's length: per-object
// results go to temporary files sorted by an external merge sort (drag_objects.hpp), the
// curves are downsampled as they are swept, and sites are few.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "drag/drag_last_use.hpp"
#include "tracetools/site_stats.hpp"
#include "strata/trace/format.hpp"
#include "support/error.hpp"

namespace strata::drag {

// What an id of the trace is.
enum class DragFamily : std::uint8_t {
  Reap,    // a reap, not an object (also an id never created, in a bad trace)
  Malloc,  // malloc, calloc, realloc or memalign: freed with free
  New,     // operator new: freed with delete
  InReap,  // reap_malloc: freed with reap_free on its reap
};

// How an object ended.
enum class DragEnd : std::uint8_t {
  Live,     // still live when the trace ends
  Release,  // free, delete or reap_free of it
  Realloc,  // a realloc of it (its last use is that realloc)
  Reap,     // the reap_clear or reap_destroy that freed its reap
};

// One id. Clocks are in allocation time; seqs are trace events (from 0).
struct DragObject {
  std::uint64_t size = 0;
  std::uint64_t site = trace::kNoSite;
  std::uint64_t created = 0;     // clock after its creating event
  std::uint64_t lastUse = 0;     // clock after its last-use event (the rules above applied)
  std::uint64_t ended = 0;       // clock after its ending event; the final clock when Live
  std::uint64_t lastUseSeq = 0;  // its last-use event (rules applied)
  std::uint64_t endSeq = 0;      // its ending event; the trace's event count when Live
  std::uint64_t reap = trace::kNoObject;  // InReap: the reap it came from
  DragFamily family = DragFamily::Reap;
  DragEnd end = DragEnd::Live;
  bool covered = false;          // the last-use file has a record of it
};

// One point of the curves: live bytes at a clock.
struct DragPoint {
  std::uint64_t clock = 0;
  std::uint64_t actualBytes = 0;  // live as the program ran
  std::uint64_t idealBytes = 0;   // live had each object been freed right after its last use
  friend bool operator==(const DragPoint&, const DragPoint&) = default;
};

// The drag of one allocation site: the area its objects held after their last use.
struct SiteDrag {
  std::uint64_t site = 0;
  double drag = 0;               // sum of size x (end - last use), byte x bytes allocated
  std::uint64_t bytes = 0;       // bytes its objects asked for
  std::uint64_t objects = 0;
};

struct DragOptions {
  // The curves keep at most this many points (0: every creating event): the clock range is
  // cut into equal buckets and each keeps its largest actual and largest ideal live bytes, at
  // the clock of its last creating event, so peaks survive.
  std::size_t maxPoints = 1000;
  // Where the temporary files go (removed when done, also on error): empty for $TMPDIR, or
  // /tmp without it.
  std::string tempDir;
  // Records an external sort holds in memory (a run); more are sorted in runs on disk.
  std::size_t sortRunRecords = std::size_t{1} << 18;
  // Called once for each object (reaps are not objects) with its results, in last-use order:
  // for tests and tools that look at objects one by one. Nothing is kept per object.
  std::function<void(std::uint64_t id, const DragObject&)> onObject;
};

struct DragResult {
  std::vector<DragPoint> curve;     // downsampled (DragOptions::maxPoints), by clock
  std::uint64_t samples = 0;        // creating events the curves were sampled at
  std::uint64_t events = 0;         // trace events
  std::uint64_t finalClock = 0;     // bytes requested over the whole trace
  std::uint64_t objectCount = 0;    // objects created (reaps not counted)
  // Areas under the curves (sum of size x lifetime in allocation time) and their ratio. drag
  // is 1.0 when no object outlives its last use. When the ideal area is 0 (every object was
  // either empty or never used after its creation), drag is 1.0 if the actual area is 0 too
  // and +infinity otherwise (dragUnbounded says so, for a printer that cannot show infinity).
  double actualArea = 0, idealArea = 0, drag = 1.0;
  bool dragUnbounded = false;
  std::uint64_t peakActual = 0, peakIdeal = 0;
  double increasePercent = 0;       // (peakActual - peakIdeal) / peakIdeal x 100; 0 if both 0
  // Objects (of size > 0) the last-use file has no record of, and their bytes.
  std::uint64_t uncoveredObjects = 0, uncoveredBytes = 0;
  // Records whose release seq is not where the trace ended the object (a cross-check).
  std::uint64_t releaseMismatches = 0;
  bool traceComplete = false;       // the trace has its trailer
  bool lastUseComplete = false;     // the last-use file has its trailer
  // Sites (a trace with the SITES flag): the frames and modules (sites.bySite holds each
  // site's objects and bytes; its peak figures are left 0), and the drag by site (index = site
  // id; [0] = unknown site).
  tracetools::SiteStats sites;
  std::vector<SiteDrag> siteDrag;
  // What the analysis held: the most ids (objects and reaps) live at once, and the sorted runs
  // its external sorts wrote to disk (0: everything was sorted in memory).
  std::uint64_t peakLiveIds = 0, sortRuns = 0;
};

// A trace that creates no object: it has no drag (the message says so, naming the file).
class NothingAllocated : public support::Error {
 public:
  using support::Error::Error;
};

// Reads the trace at `tracePath` and computes its drag. Throws support::Error naming the
// file for an unreadable or malformed trace, NothingAllocated ("the program allocated
// nothing") for a trace that creates no object, and one naming the id for a record of an object the trace does not have
// (or of a reap) or for an id with two records (naming the last-use file when it was read
// from one). The last-use records are read again from lastUse's file or bytes.
DragResult analyzeDrag(const std::string& tracePath, const LastUseData& lastUse,
                       const DragOptions& options = {});

// The `k` sites with the largest drag (ties: the lower id), sites with no drag left out.
std::vector<SiteDrag> topDragSites(const DragResult& r, std::size_t k);

}  // namespace strata::drag
