// analyzeDrag (drag_analysis.hpp): the object pass (drag_objects.hpp) gives each object's
// results sorted by last use and its end in trace order; a second pass reads the trace again
// with both. At each event the objects ending there leave the actual curve (and the ideal one
// when in use to their end), its creation enters both, and the curves are sampled; then the
// objects last used there are stamped with the clock, which gives their areas and drag, and
// leave the ideal curve. Memory: the live ids (first pass), sort runs and fixed buffers,
// the curve's points and a slot per site.
#include "drag/drag_analysis.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "drag/drag_objects.hpp"
#include "strata/trace/reader.hpp"
#include "tracetools/trace_error.hpp"

namespace strata::drag {
namespace {

using trace::Event;
using trace::Op;

__extension__ typedef unsigned __int128 Wide;  // areas: bytes x bytes overflow 64 bits
constexpr std::uint64_t kUnset = ~std::uint64_t{0};

class CurvePass {
 public:
  CurvePass(DragObjectPass& objects, const DragOptions& options, DragResult& r)
      : objects_(objects), options_(options), r_(r) {
    r_.siteDrag.resize(objects.siteCount + 1);
    for (std::uint64_t id = 0; id <= objects.siteCount; ++id) r_.siteDrag[id].site = id;
    thin_ = options.maxPoints != 0 && objects.samples > options.maxPoints;
    nextUse();
    nextEnd();
  }

  void apply(const Event& e, std::uint64_t seq) {
    const bool creates = trace::opCreates(e.op) && (e.flags & trace::kFlagFailed) == 0;
    if (creates) clock_ += e.size;
    for (; haveEnd_ && end_.endSeq == seq; nextEnd()) {
      actual_ -= end_.size;
      if (end_.idealToo != 0) ideal_ -= end_.size;
    }
    if (creates) {
      if (e.op != Op::ReapCreate) {
        actual_ += e.size;
        ideal_ += e.size;
      }
      sample();
    }
    for (; haveUse_ && use_.lastUseSeq <= seq; nextUse()) used(use_);
  }

  // The objects last used at the end (live ones in use to the end), then the figures.
  void finish() {
    for (; haveUse_; nextUse()) used(use_);
    r_.actualArea = static_cast<double>(actualArea_);
    r_.idealArea = static_cast<double>(idealArea_);
    r_.dragUnbounded = idealArea_ == 0 && actualArea_ != 0;
    r_.drag = idealArea_ == 0
                  ? (actualArea_ == 0 ? 1.0 : std::numeric_limits<double>::infinity())
                  : static_cast<double>(actualArea_) / static_cast<double>(idealArea_);
    const double over = static_cast<double>(r_.peakActual - r_.peakIdeal);
    r_.increasePercent =
        r_.peakIdeal == 0 ? 0.0 : 100.0 * over / static_cast<double>(r_.peakIdeal);
  }

  // The sites read: frames and modules, with each site's objects and bytes.
  void setSites(tracetools::SiteStats s) {
    for (std::uint64_t id = 0; id < r_.siteDrag.size() && id < s.bySite.size(); ++id) {
      s.bySite[id].allocations = r_.siteDrag[id].objects;
      s.bySite[id].bytes = r_.siteDrag[id].bytes;
    }
    r_.sites = std::move(s);
  }

 private:
  void nextUse() { haveUse_ = objects_.byLastUse->next(use_); }
  void nextEnd() { haveEnd_ = objects_.ends->read(&end_, sizeof end_); }

  // Object o was last used after the current event: clock_ is its last-use clock.
  void used(const DragObjectRecord& o) {
    actualArea_ += Wide{o.size} * (o.ended - o.created);
    idealArea_ += Wide{o.size} * (clock_ - o.created);
    SiteDrag& s = r_.siteDrag[o.site < r_.siteDrag.size() ? o.site : 0];
    s.drag += static_cast<double>(o.size) * static_cast<double>(o.ended - clock_);
    s.bytes += o.size;
    ++s.objects;
    if (o.lastUseSeq < o.endSeq) ideal_ -= o.size;
    if (options_.onObject) {
      DragObject d;
      d.size = o.size;
      d.site = o.site;
      d.created = o.created;
      d.lastUse = clock_;
      d.ended = o.ended;
      d.lastUseSeq = o.lastUseSeq;
      d.endSeq = o.endSeq;
      d.reap = o.reap;
      d.family = o.family;
      d.end = o.end;
      d.covered = o.covered;
      options_.onObject(o.id, d);
    }
  }

  // A sample after a creating event: the peaks, and the curve's bucket of the clock range.
  void sample() {
    r_.peakActual = std::max(r_.peakActual, actual_);
    r_.peakIdeal = std::max(r_.peakIdeal, ideal_);
    const std::uint64_t b =
        thin_ ? static_cast<std::uint64_t>(Wide{clock_} * options_.maxPoints /
                                           (Wide{objects_.finalClock} + 1))
              : samples_;
    ++samples_;
    if (b != bucket_ || r_.curve.empty()) {
      r_.curve.push_back(DragPoint{clock_, actual_, ideal_});
      bucket_ = b;
    } else {
      DragPoint& p = r_.curve.back();
      p.clock = clock_;
      p.actualBytes = std::max(p.actualBytes, actual_);
      p.idealBytes = std::max(p.idealBytes, ideal_);
    }
  }

  DragObjectPass& objects_;
  const DragOptions& options_;
  DragResult& r_;
  DragObjectRecord use_;
  DragEndRecord end_;
  bool haveUse_ = false, haveEnd_ = false, thin_ = false;
  std::uint64_t clock_ = 0, actual_ = 0, ideal_ = 0, samples_ = 0, bucket_ = kUnset;
  Wide actualArea_ = 0, idealArea_ = 0;
};

}  // namespace

DragResult analyzeDrag(const std::string& tracePath, const LastUseData& lastUse,
                       const DragOptions& options) {
  DragObjectPass objects = runDragObjectPass(tracePath, lastUse, options);
  DragResult r;
  r.lastUseComplete = lastUse.complete;
  r.traceComplete = objects.traceComplete;
  r.events = objects.events;
  r.finalClock = objects.finalClock;
  r.objectCount = objects.objectCount;
  r.samples = objects.samples;
  r.uncoveredObjects = objects.uncoveredObjects;
  r.uncoveredBytes = objects.uncoveredBytes;
  r.releaseMismatches = objects.releaseMismatches;
  r.peakLiveIds = objects.peakLiveIds;
  r.sortRuns = objects.sortRuns;

  DragTraceInput input(tracePath);
  trace::TraceReader<trace::FdSource>& reader = input.reader();
  CurvePass pass(objects, options, r);
  Event e;
  trace::ReadStatus s;
  std::uint64_t seq = 0;
  while ((s = reader.next(e)) == trace::ReadStatus::Event && seq < r.events) pass.apply(e, seq++);
  if (s == trace::ReadStatus::Error)
    throw tracetools::traceError(tracePath, reader.error());
  if (s == trace::ReadStatus::Event || seq != r.events)
    throw support::Error(tracePath + ": the trace changed while it was analysed");
  pass.finish();
  pass.setSites(tracetools::SiteTally{}.finish(reader.hasSites(), reader.sites()));
  return r;
}

std::vector<SiteDrag> topDragSites(const DragResult& r, std::size_t k) {
  std::vector<SiteDrag> out;
  for (const SiteDrag& s : r.siteDrag)
    if (s.drag > 0) out.push_back(s);
  std::stable_sort(out.begin(), out.end(),
                   [](const SiteDrag& a, const SiteDrag& b) { return a.drag > b.drag; });
  if (out.size() > k) out.resize(k);
  return out;
}

}  // namespace strata::drag
