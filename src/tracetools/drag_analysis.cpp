// analyzeDrag (drag_analysis.hpp): one pass over the trace with the last-use records, then the
// curves from the per-object results.
//
// The pass keeps the clock and, per id, a DragObject. Two cursors walk the last-use records:
// one in id order (ids are created in increasing order) marks objects covered at their
// creation, and clamps a last use recorded before the creation to the creation; one in
// last-use order stamps each object with the clock at its last-use event. After the pass the
// rules (drag_analysis.hpp) are applied and the curves follow from each object's range of
// samples: the curves are sampled after every creating event, and creating event k makes id
// k, so an object counts in samples [its id, the last id created while it was live] (actual)
// or [its id, the last id created up to its last use] (ideal, never past the actual end). Two
// difference arrays over ids give both curves in one sweep. Memory: about 100 bytes an id.
#include "drag_analysis.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <unordered_map>

#include "strata/trace/reader.hpp"

namespace strata::tracetools {
namespace {

using trace::Event;
using trace::kNoObject;
using trace::Op;

__extension__ typedef unsigned __int128 Wide;  // areas: bytes x bytes overflow 64 bits
constexpr std::uint64_t kUnset = ~std::uint64_t{0};

class DragPass {
 public:
  DragPass(const LastUseData& lu, DragResult& r) : lu_(lu), r_(r) {
    byUse_.resize(lu.records.size());
    for (std::size_t i = 0; i < byUse_.size(); ++i) byUse_[i] = i;
    std::sort(byUse_.begin(), byUse_.end(), [&lu](std::size_t a, std::size_t b) {
      return lu.records[a].lastUse < lu.records[b].lastUse;
    });
  }

  // Applies event `seq`: its ends, then its creation, then the last uses stamped at it.
  void apply(const Event& e, std::uint64_t seq) {
    const bool failed = (e.flags & trace::kFlagFailed) != 0;
    const bool creates = trace::opCreates(e.op) && !failed;
    if (creates) clock_ += e.size;
    switch (e.op) {
      case Op::Realloc:  // realloc(p, 0) that freed p is FAILED with size 0: p ends too
        if (e.target != kNoObject && (!failed || e.size == 0)) end(e.target, seq, DragEnd::Realloc);
        break;
      case Op::Free: case Op::Delete: case Op::ReapFree:
        if (e.object != kNoObject) end(e.object, seq, DragEnd::Release);
        break;
      case Op::ReapClear: case Op::ReapDestroy:
        clearReap(e.target, seq, e.op == Op::ReapDestroy);
        break;
      case Op::Touch:
        if (isLiveObject(e.object)) r_.touches.push_back(DragTouch{e.object, seq, e.size});
        break;
      default:
        break;
    }
    if (creates) birth(e, seq);
    for (; useAt_ < byUse_.size() && lu_.records[byUse_[useAt_]].lastUse <= seq; ++useAt_) {
      const std::uint64_t id = lu_.records[byUse_[useAt_]].id;
      // An id not created yet is clamped at its creation; a reap is refused at the end.
      if (id >= r_.objects.size() || useIdx_[id] != kUnset) continue;
      DragObject& o = r_.objects[id];
      o.lastUseSeq = seq;
      o.lastUse = clock_;
      useIdx_[id] = r_.objects.size() - 1;
    }
  }

  // The sites read: frames and modules, with each site's objects and bytes.
  void setSites(SiteStats s) {
    for (std::uint64_t id = 0; id < r_.siteDrag.size() && id < s.bySite.size(); ++id) {
      s.bySite[id].allocations = r_.siteDrag[id].objects;
      s.bySite[id].bytes = r_.siteDrag[id].bytes;
    }
    r_.sites = std::move(s);
  }
  // Sites 0..count (0: unknown), before finish().
  void sizeSites(std::uint64_t count) {
    r_.siteDrag.resize(count + 1);
    for (std::uint64_t id = 0; id <= count; ++id) r_.siteDrag[id].site = id;
  }


  // The rules, the areas, the sites and the curves, once every event was applied.
  void finish(std::uint64_t events, const DragOptions& options) {
    r_.events = events;
    r_.finalClock = clock_;
    for (const LastUseRecord& rec : lu_.records)
      if (rec.id >= r_.objects.size() || r_.objects[rec.id].family == DragFamily::Reap)
        throw std::runtime_error(
            "the last-use file has a record of object " + std::to_string(rec.id) +
            " (at byte offset " + std::to_string(rec.offset) + "), " +
            (rec.id >= r_.objects.size()
                 ? "but the trace created only " + std::to_string(r_.objects.size()) + " ids"
                 : std::string("which is a reap in the trace")));
    const std::size_t n = r_.objects.size();
    const std::uint64_t last = n - 1;  // the last sample
    std::vector<std::uint64_t> actual(n + 1, 0), ideal(n + 1, 0);  // difference arrays
    Wide actualArea = 0, idealArea = 0;
    for (std::uint64_t id = 0; id < n; ++id) {
      DragObject& o = r_.objects[id];
      if (o.family == DragFamily::Reap) continue;
      if (o.end == DragEnd::Live) {
        o.endSeq = events;
        o.ended = clock_;
        endIdx_[id] = last;
      }
      if (!o.covered && o.size != 0) {
        ++r_.uncoveredObjects;
        r_.uncoveredBytes += o.size;
      }
      if (o.covered) crossCheck(id, o);
      if (!o.covered || useIdx_[id] == kUnset || o.end == DragEnd::Realloc ||
          o.lastUseSeq > o.endSeq) {
        o.lastUseSeq = o.endSeq;
        o.lastUse = o.ended;
        useIdx_[id] = endIdx_[id];
      }
      actualArea += Wide{o.size} * (o.ended - o.created);
      idealArea += Wide{o.size} * (o.lastUse - o.created);
      siteOf(o.site).drag += static_cast<double>(o.size) * static_cast<double>(o.ended - o.lastUse);
      siteOf(o.site).bytes += o.size;
      ++siteOf(o.site).objects;
      actual[id] += o.size;
      actual[endIdx_[id] + 1] -= o.size;
      ideal[id] += o.size;
      ideal[std::min(useIdx_[id], endIdx_[id]) + 1] -= o.size;
    }
    r_.actualArea = static_cast<double>(actualArea);
    r_.idealArea = static_cast<double>(idealArea);
    r_.dragUnbounded = idealArea == 0 && actualArea != 0;
    r_.drag = idealArea == 0 ? (actualArea == 0 ? 1.0 : std::numeric_limits<double>::infinity())
                             : static_cast<double>(actualArea) / static_cast<double>(idealArea);
    curves(actual, ideal, options.maxPoints);
    const double over = static_cast<double>(r_.peakActual - r_.peakIdeal);
    r_.increasePercent =
        r_.peakIdeal == 0 ? 0.0 : 100.0 * over / static_cast<double>(r_.peakIdeal);
  }

 private:
  bool isLiveObject(std::uint64_t id) const {
    return id < r_.objects.size() && r_.objects[id].family != DragFamily::Reap &&
           r_.objects[id].end == DragEnd::Live;
  }

  void birth(const Event& e, std::uint64_t seq) {
    const std::uint64_t id = e.object;  // == r_.objects.size(): ids are dense
    DragObject o;
    o.size = e.size;
    o.site = e.site;
    o.created = clock_;
    switch (e.op) {
      case Op::ReapCreate: o.family = DragFamily::Reap; break;
      case Op::ReapMalloc: o.family = DragFamily::InReap; o.reap = e.target; break;
      case Op::New: o.family = DragFamily::New; break;
      default: o.family = DragFamily::Malloc; break;
    }
    if (e.target != kNoObject && (e.op == Op::ReapCreate || e.op == Op::ReapMalloc))
      members_[e.target].push_back(id);
    r_.objects.push_back(o);
    useIdx_.push_back(kUnset);
    endIdx_.push_back(kUnset);
    if (o.family == DragFamily::Reap) return;
    ++r_.objectCount;
    const auto& recs = lu_.records;
    while (idAt_ < recs.size() && recs[idAt_].id < id) ++idAt_;
    if (idAt_ < recs.size() && recs[idAt_].id == id) {
      r_.objects[id].covered = true;
      if (recs[idAt_].lastUse < seq) {  // used before it existed: a last use at its creation
        r_.objects[id].lastUseSeq = seq;
        r_.objects[id].lastUse = clock_;
        useIdx_[id] = id;
      }
    }
  }

  // Object `id` ends at event seq (ignored when it is not a live object: a double free).
  void end(std::uint64_t id, std::uint64_t seq, DragEnd how) {
    if (!isLiveObject(id)) return;
    DragObject& o = r_.objects[id];
    o.end = how;
    o.endSeq = seq;
    o.ended = clock_;
    endIdx_[id] = r_.objects.size() - 1;  // ids created before this event
  }

  // Ends every live object of reap `reap` and of the reaps under it, which die (and `reap`
  // too when destroyed). A worklist, so deep nesting cannot overflow the stack.
  void clearReap(std::uint64_t reap, std::uint64_t seq, bool destroy) {
    if (reap >= r_.objects.size() || r_.objects[reap].family != DragFamily::Reap ||
        r_.objects[reap].end != DragEnd::Live)
      return;
    if (destroy) r_.objects[reap].end = DragEnd::Reap;
    std::vector<std::uint64_t> work{reap};
    while (!work.empty()) {
      const auto it = members_.find(work.back());
      work.pop_back();
      if (it == members_.end()) continue;
      const std::vector<std::uint64_t> ids = std::move(it->second);
      members_.erase(it);
      for (const std::uint64_t id : ids) {
        DragObject& o = r_.objects[id];
        if (o.family != DragFamily::Reap) {
          end(id, seq, DragEnd::Reap);
        } else if (o.end == DragEnd::Live) {
          o.end = DragEnd::Reap;
          work.push_back(id);
        }
      }
    }
  }

  void crossCheck(std::uint64_t id, const DragObject& o) {
    const LastUseRecord* rec = lu_.find(id);
    const std::uint64_t expected = o.end == DragEnd::Live ? kLastUseAtExit : o.endSeq;
    if (rec != nullptr && rec->release != expected) ++r_.releaseMismatches;
  }

  SiteDrag& siteOf(std::uint64_t site) {
    if (site >= r_.siteDrag.size()) site = 0;
    return r_.siteDrag[site];
  }

  // Sweeps the difference arrays into samples (one per id), tracks the peaks and keeps at
  // most maxPoints points: the bucket of the clock range each sample falls in.
  void curves(const std::vector<std::uint64_t>& actual, const std::vector<std::uint64_t>& ideal,
              std::size_t maxPoints) {
    const std::size_t n = r_.objects.size();
    r_.samples = n;
    const bool thin = maxPoints != 0 && n > maxPoints;
    std::uint64_t a = 0, i = 0, bucket = kUnset;
    for (std::size_t id = 0; id < n; ++id) {
      a += actual[id];
      i += ideal[id];
      r_.peakActual = std::max(r_.peakActual, a);
      r_.peakIdeal = std::max(r_.peakIdeal, i);
      const std::uint64_t x = r_.objects[id].created;
      const std::uint64_t b =
          thin ? static_cast<std::uint64_t>(Wide{x} * maxPoints / (Wide{r_.finalClock} + 1)) : id;
      if (b != bucket || r_.curve.empty()) {
        r_.curve.push_back(DragPoint{x, a, i});
        bucket = b;
      } else {
        DragPoint& p = r_.curve.back();
        p.clock = x;
        p.actualBytes = std::max(p.actualBytes, a);
        p.idealBytes = std::max(p.idealBytes, i);
      }
    }
  }

  const LastUseData& lu_;
  DragResult& r_;
  std::vector<std::size_t> byUse_;     // record indices by last use
  std::size_t useAt_ = 0, idAt_ = 0;   // the two cursors
  std::vector<std::uint64_t> useIdx_;  // by id: the last sample up to its last use
  std::vector<std::uint64_t> endIdx_;  // by id: the last sample it was live in
  std::unordered_map<std::uint64_t, std::vector<std::uint64_t>> members_;  // reap -> ids
  std::uint64_t clock_ = 0;
};

}  // namespace

DragResult analyzeDrag(const std::string& tracePath, const LastUseData& lastUse,
                       const DragOptions& options) {
  const int fd = ::open(tracePath.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(tracePath + ": cannot read: " + std::strerror(errno));
  DragResult r;
  r.lastUseComplete = lastUse.complete;
  DragPass pass(lastUse, r);
  trace::TraceReader<trace::FdSource> reader(trace::FdSource{fd});
  Event e;
  trace::ReadStatus s;
  std::uint64_t seq = 0;
  while ((s = reader.next(e)) == trace::ReadStatus::Event) pass.apply(e, seq++);
  ::close(fd);
  if (s == trace::ReadStatus::Error)
    throw std::runtime_error(tracePath + ": " + reader.error().message());
  if (r.objectCount == 0)
    throw std::runtime_error(tracePath + ": the program allocated nothing (the trace creates "
                                         "no object), so it has no drag");
  r.traceComplete = reader.complete();
  pass.sizeSites(reader.sites().siteCount());
  pass.finish(seq, options);
  pass.setSites(SiteTally{}.finish(reader.hasSites(), reader.sites()));
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

}  // namespace strata::tracetools
