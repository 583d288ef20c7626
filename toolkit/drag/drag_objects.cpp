// runDragObjectPass (drag_objects.hpp): the trace with the last-use records sorted by id. A
// live map holds each live id; an object's record is met at its creation (ids are created in
// increasing order), its last use is clamped there, and its results are written out when it
// ends: at its release or realloc, at the reap_clear / reap_destroy that frees its reap (each
// live reap keeps the set of its live members, objects and reaps), or at the end of the trace.
#include "drag/drag_objects.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "strata/trace/reader.hpp"
#include "tracetools/trace_error.hpp"

namespace strata::drag {
namespace {

using trace::Event;
using trace::kNoObject;
using trace::Op;

struct ById {
  bool operator()(const LastUseRecord& a, const LastUseRecord& b) const {
    return a.id != b.id ? a.id < b.id : a.offset < b.offset;
  }
};

// A live id.
struct Live {
  std::uint64_t size = 0, site = 0, created = 0;
  std::uint64_t lastUseSeq = 0;  // the record's, clamped at the creation
  std::uint64_t release = 0;     // the record's release seq
  std::uint64_t parent = kNoObject;  // the reap it came from
  std::uint64_t touchSize = 0;
  DragFamily family = DragFamily::Malloc;
  bool covered = false, touched = false;
};

class ObjectPass {
 public:
  ObjectPass(const LastUseData& lu, const DragOptions& options, DragObjectPass& out)
      : lu_(lu), out_(out), ids_(options.tempDir, options.sortRunRecords) {
    forEachLastUseRecord(lu, [this](const LastUseRecord& r) { ids_.push(r); });
    ids_.finish();
    advance();
    out.byLastUse = std::make_unique<tracetools::ExternalSorter<DragObjectRecord, DragByLastUse>>(
        options.tempDir, options.sortRunRecords);
    out.ends = std::make_unique<tracetools::SpillFile>(tracetools::tempDirOr(options.tempDir));
  }

  // Applies event `seq`: its ends, then its creation.
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
        if (Live* o = object(e.object); o != nullptr && o->covered && seq > o->lastUseSeq) {
          o->touched = true;
          o->touchSize = e.size;
        }
        break;
      default:
        break;
    }
    if (creates) birth(e, seq);
    out_.peakLiveIds = std::max<std::uint64_t>(out_.peakLiveIds, live_.size());
  }

  // Ends what is still live, checks the records no object took, and finishes the outputs.
  void finish(std::uint64_t events) {
    out_.events = events;
    out_.finalClock = clock_;
    std::vector<std::uint64_t> left;
    for (const auto& [id, o] : live_)
      if (o.family != DragFamily::Reap) left.push_back(id);
    std::sort(left.begin(), left.end());
    for (const std::uint64_t id : left) emit(id, live_.at(id), events, clock_, DragEnd::Live);
    live_.clear();
    members_.clear();
    for (; have_; advance())
      bad(cur_, "but the trace created only " + std::to_string(out_.samples) + " ids");
    out_.byLastUse->finish();
    out_.ends->rewind();
    out_.sortRuns = ids_.runsWritten() + out_.byLastUse->runsWritten();
  }

  const std::string& badRecord() const { return bad_; }

 private:
  Live* object(std::uint64_t id) {
    const auto it = live_.find(id);
    return it == live_.end() || it->second.family == DragFamily::Reap ? nullptr : &it->second;
  }

  // The next record by id; a second record of an id is an error.
  void advance() {
    LastUseRecord n;
    if (!ids_.next(n)) {
      have_ = false;
      return;
    }
    if (have_ && n.id == cur_.id)
      throw support::Error(lastUseError(
          lu_, "object " + std::to_string(n.id) + " has a second record (the first at byte " +
                   "offset " + std::to_string(cur_.offset) + ") at byte offset " +
                   std::to_string(n.offset)));
    cur_ = n;
    have_ = true;
  }

  // Remembers the first (lowest id) record of no object.
  void bad(const LastUseRecord& r, const std::string& why) {
    if (bad_.empty())
      bad_ = "the last-use file has a record of object " + std::to_string(r.id) +
             " (at byte offset " + std::to_string(r.offset) + "), " + why;
  }

  void birth(const Event& e, std::uint64_t seq) {
    const std::uint64_t id = e.object;  // ids are dense, in creation order
    ++out_.samples;
    Live o;
    o.size = e.size;
    o.site = e.site;
    o.created = clock_;
    switch (e.op) {
      case Op::ReapCreate: o.family = DragFamily::Reap; break;
      case Op::ReapMalloc: o.family = DragFamily::InReap; break;
      case Op::New: o.family = DragFamily::New; break;
      default: o.family = DragFamily::Malloc; break;
    }
    if (e.target != kNoObject && (e.op == Op::ReapCreate || e.op == Op::ReapMalloc)) {
      o.parent = e.target;
      const auto r = live_.find(e.target);  // a dead reap's members never end with it
      if (r != live_.end() && r->second.family == DragFamily::Reap) members_[e.target].insert(id);
    }
    while (have_ && cur_.id < id) advance();
    const bool recorded = have_ && cur_.id == id;
    if (o.family == DragFamily::Reap) {
      if (recorded) bad(cur_, "which is a reap in the trace");
    } else {
      ++out_.objectCount;
      if (recorded) {
        o.covered = true;
        o.lastUseSeq = std::max(cur_.lastUse, seq);  // never before its creation
        o.release = cur_.release;
      }
    }
    if (recorded) advance();
    live_[id] = o;
  }

  // Object `id` ends at event seq (ignored when it is not a live object: a double free).
  void end(std::uint64_t id, std::uint64_t seq, DragEnd how) {
    const auto it = live_.find(id);
    if (it == live_.end() || it->second.family == DragFamily::Reap) return;
    emit(id, it->second, seq, clock_, how);
    if (it->second.parent != kNoObject)
      if (const auto m = members_.find(it->second.parent); m != members_.end()) m->second.erase(id);
    live_.erase(it);
  }

  // Writes out object id's results, the rules applied.
  void emit(std::uint64_t id, const Live& o, std::uint64_t endSeq, std::uint64_t ended,
            DragEnd how) {
    DragObjectRecord r;
    r.id = id;
    r.size = o.size;
    r.site = o.site;
    r.created = o.created;
    r.ended = ended;
    r.endSeq = endSeq;
    r.reap = o.family == DragFamily::InReap ? o.parent : kNoObject;
    r.family = o.family;
    r.end = how;
    r.covered = o.covered;
    const bool inUseToEnd = !o.covered || how == DragEnd::Realloc || o.lastUseSeq > endSeq;
    r.lastUseSeq = inUseToEnd ? endSeq : o.lastUseSeq;
    r.touched = o.touched && r.lastUseSeq < endSeq;
    r.touchSize = o.touchSize;
    if (!o.covered && o.size != 0) {
      ++out_.uncoveredObjects;
      out_.uncoveredBytes += o.size;
    }
    if (o.covered && o.release != (how == DragEnd::Live ? kLastUseAtExit : endSeq))
      ++out_.releaseMismatches;
    out_.byLastUse->push(r);
    if (how != DragEnd::Live) {
      const DragEndRecord e{endSeq, o.size, r.lastUseSeq == endSeq ? 1u : 0u};
      out_.ends->write(&e, sizeof e);
    }
  }

  // Ends every live object of reap `reap` and of the reaps under it, which die (and `reap`
  // too when destroyed). A worklist, so deep nesting cannot overflow the stack.
  void clearReap(std::uint64_t reap, std::uint64_t seq, bool destroy) {
    const auto it = live_.find(reap);
    if (it == live_.end() || it->second.family != DragFamily::Reap) return;
    if (destroy) {
      if (it->second.parent != kNoObject)
        if (const auto m = members_.find(it->second.parent); m != members_.end())
          m->second.erase(reap);
      live_.erase(it);
    }
    std::vector<std::uint64_t> work{reap};
    while (!work.empty()) {
      const auto m = members_.find(work.back());
      work.pop_back();
      if (m == members_.end()) continue;
      std::vector<std::uint64_t> ids(m->second.begin(), m->second.end());
      members_.erase(m);
      std::sort(ids.begin(), ids.end());
      for (const std::uint64_t id : ids) {
        const auto o = live_.find(id);
        if (o == live_.end()) continue;
        if (o->second.family != DragFamily::Reap) {
          emit(id, o->second, seq, clock_, DragEnd::Reap);
          live_.erase(o);
        } else {
          live_.erase(o);
          work.push_back(id);
        }
      }
    }
  }

  const LastUseData& lu_;
  DragObjectPass& out_;
  tracetools::ExternalSorter<LastUseRecord, ById> ids_;
  LastUseRecord cur_;
  bool have_ = false;
  std::unordered_map<std::uint64_t, Live> live_;
  std::unordered_map<std::uint64_t, std::unordered_set<std::uint64_t>> members_;  // reap -> ids
  std::uint64_t clock_ = 0;
  std::string bad_;
};

}  // namespace

DragTraceInput::DragTraceInput(const std::string& path)
    : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
  if (fd_ < 0) throw support::Error(path + ": cannot read: " + std::strerror(errno));
  reader_ = std::make_unique<trace::TraceReader<trace::FdSource>>(trace::FdSource{fd_});
}

DragTraceInput::~DragTraceInput() {
  reader_.reset();
  ::close(fd_);
}

DragObjectPass runDragObjectPass(const std::string& tracePath, const LastUseData& lastUse,
                                 const DragOptions& options) {
  DragObjectPass out;
  ObjectPass pass(lastUse, options, out);
  DragTraceInput input(tracePath);
  trace::TraceReader<trace::FdSource>& reader = input.reader();
  Event e;
  trace::ReadStatus s;
  std::uint64_t seq = 0;
  while ((s = reader.next(e)) == trace::ReadStatus::Event) pass.apply(e, seq++);
  if (s == trace::ReadStatus::Error)
    throw tracetools::traceError(tracePath, reader.error());
  if (out.objectCount == 0)
    throw NothingAllocated(tracePath + ": the program allocated nothing (the trace creates "
                                         "no object), so it has no drag");
  out.traceComplete = reader.complete();
  out.siteCount = reader.sites().siteCount();
  pass.finish(seq);
  if (!pass.badRecord().empty()) throw support::Error(pass.badRecord());
  return out;
}

}  // namespace strata::drag
