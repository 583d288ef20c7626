// The first pass of `strata drag`'s analysis (drag_analysis.hpp) and of its ideal trace
// (drag_ideal_trace.hpp): the trace read with the last-use records sorted by id (an external
// sort, so ids are met in creation order), and each object's results, once it ends, written
// out: in full to an external sort by last use, and as an end record (in end order, which is
// trace order) to a temporary file. The rules of drag_analysis.hpp that need the trace (realloc,
// a last use before the creation or after the end, uncovered objects) are applied here.
//
// Memory: the ids live at a time (objects and reaps, with each reap's live members), one
// sort run, and fixed buffers.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "drag/drag_analysis.hpp"
#include "drag/drag_last_use.hpp"
#include "tracetools/external_sort.hpp"
#include "strata/trace/reader.hpp"

namespace strata::drag {

// One object's results as written out (clocks are allocation time, seqs trace events).
struct DragObjectRecord {
  std::uint64_t lastUseSeq = 0, id = 0, size = 0, site = 0, created = 0, ended = 0;
  std::uint64_t endSeq = 0, reap = 0;
  std::uint64_t touchSize = 0;  // its last Touch after its last use, when `touched`
  DragFamily family = DragFamily::Malloc;
  DragEnd end = DragEnd::Live;
  bool covered = false, touched = false;
};
struct DragByLastUse {
  bool operator()(const DragObjectRecord& a, const DragObjectRecord& b) const {
    return a.lastUseSeq != b.lastUseSeq ? a.lastUseSeq < b.lastUseSeq : a.id < b.id;
  }
};

// An object's end as the curves need it: its bytes leave the actual curve at event endSeq
// (before that event's creation), and the ideal one too when it was in use up to its end.
struct DragEndRecord {
  std::uint64_t endSeq = 0, size = 0, idealToo = 0;
};

struct DragObjectPass {
  std::uint64_t events = 0, finalClock = 0;
  std::uint64_t samples = 0;      // creating events (ids)
  std::uint64_t objectCount = 0;  // objects created (reaps not counted)
  std::uint64_t uncoveredObjects = 0, uncoveredBytes = 0, releaseMismatches = 0;
  std::uint64_t siteCount = 0;    // sites the trace defines
  std::uint64_t peakLiveIds = 0, sortRuns = 0;
  bool traceComplete = false;
  // Every object, by last use (ties by id); then finish()ed, ready to read.
  std::unique_ptr<tracetools::ExternalSorter<DragObjectRecord, DragByLastUse>> byLastUse;
  // The objects that ended before the trace did, in end order; rewound, ready to read.
  std::unique_ptr<tracetools::SpillFile> ends;
};

// A trace opened for one of the passes: its reader, the file closed when it goes. Throws
// support::Error "PATH: cannot read: WHY".
class DragTraceInput {
 public:
  explicit DragTraceInput(const std::string& path);
  ~DragTraceInput();
  DragTraceInput(const DragTraceInput&) = delete;
  DragTraceInput& operator=(const DragTraceInput&) = delete;
  trace::TraceReader<trace::FdSource>& reader() { return *reader_; }

 private:
  int fd_;
  std::unique_ptr<trace::TraceReader<trace::FdSource>> reader_;
};

// Runs the pass. Throws support::Error as analyzeDrag does (drag_analysis.hpp).
DragObjectPass runDragObjectPass(const std::string& tracePath, const LastUseData& lastUse,
                                 const DragOptions& options);

}  // namespace strata::drag
