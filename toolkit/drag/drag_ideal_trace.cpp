// writeIdealTrace (drag_ideal_trace.hpp): the object pass (drag_objects.hpp) gives each
// object's last use, end, family and moving Touch, sorted by last use; this pass copies the
// trace, writes the early releases after each last-use event as the sorted records come, and
// drops the releases and touches of early-released objects that came later (those objects are
// kept in a map until their end in the original, a heap of end seqs says when they leave).
#include "drag/drag_ideal_trace.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <optional>
#include <queue>
#include <set>
#include <unordered_map>
#include <vector>

#include "drag/drag_objects.hpp"
#include "strata/trace/reader.hpp"
#include "tracetools/trace_file.hpp"
#include "tracetools/trace_error.hpp"

namespace strata::drag {
namespace {

using trace::Event;
using trace::kNoObject;
using trace::Op;

// Whether object o is released right after its last use rather than where the program did.
bool releasedEarly(const DragObjectRecord& o) {
  if (o.family == DragFamily::Reap || o.end == DragEnd::Realloc) return false;
  if (o.lastUseSeq >= o.endSeq) return false;                  // in use until it ended
  return !(o.end == DragEnd::Release && o.lastUseSeq + 1 == o.endSeq);  // already right after
}

class IdealWriter {
 public:
  IdealWriter(DragObjectPass& objects, const std::string& outPath)
      : objects_(objects), outPath_(outPath) {
    nextUse();
  }

  // Copies event `seq` (unless it moves) and writes the early releases that follow it.
  template <class Reader>
  void apply(const Event& e, std::uint64_t seq, const Reader& reader) {
    if (!out_) {
      out_.emplace(outPath_, reader.hasSites() ? tracetools::WithSites::Yes : tracetools::WithSites::No);
      if (reader.program().pid != 0 || reader.program().path[0] != '\0')
        out_->program(reader.program());
    }
    if (!moves(e, seq)) {
      while (sites_ < e.site) {  // define the sites it names, as the original did
        const auto f = reader.sites().frames(++sites_);
        out_->defineSite(f.data(), f.size());
      }
      write(e);
    }
    for (; !ends_.empty() && ends_.top().first <= seq; ends_.pop()) {  // their end has passed
      const auto it = early_.find(ends_.top().second);
      if (it != early_.end() && it->second.endSeq <= seq) early_.erase(it);
    }
    for (; haveUse_ && use_.lastUseSeq <= seq; nextUse())
      if (releasedEarly(use_)) release(use_, e);
  }

  template <class Reader>
  IdealTraceCounts finish(const Reader& reader) {
    if (reader.hasSites()) {
      std::vector<trace::ModuleInfo> modules;
      for (std::size_t i = 0; i < reader.sites().moduleCount(); ++i)
        modules.push_back(reader.sites().module(i));
      if (!modules.empty()) out_->addModules(modules);
    }
    out_->finish();
    return counts_;
  }

 private:
  struct Early {
    std::uint64_t endSeq = 0;
    bool released = false;  // ended by its own release, which the ideal trace drops
  };

  void nextUse() { haveUse_ = objects_.byLastUse->next(use_); }

  // Whether event seq is a release or touch of an early object that the ideal trace moves.
  bool moves(const Event& e, std::uint64_t seq) {
    if (e.object == kNoObject) return false;
    const auto it = early_.find(e.object);
    if (it == early_.end()) return false;
    if (trace::opFreesObject(e.op) && it->second.released && it->second.endSeq == seq) {
      ++counts_.droppedReleases;
      early_.erase(it);
      return true;
    }
    return e.op == Op::Touch;  // after the last use: written before the early release
  }

  void write(const Event& e) {
    out_->append(e);
    ++counts_.events;
    if (e.op == Op::ThreadEnd) threads_.erase(e.thread);
    else threads_.insert(e.thread);
  }

  // Writes object o's early release after event `after`, its moved touch first.
  void release(const DragObjectRecord& o, const Event& after) {
    Event e;
    e.thread = threads_.count(after.thread) != 0 || threads_.empty() ? after.thread
                                                                      : *threads_.begin();
    e.timeNs = after.timeNs;
    e.object = o.id;
    if (o.touched) {
      e.op = Op::Touch;
      e.size = o.touchSize;
      out_->append(e);
      ++counts_.events;
      ++counts_.movedTouches;
      e.size = 0;
    }
    e.op = o.family == DragFamily::New ? Op::Delete
           : o.family == DragFamily::InReap ? Op::ReapFree : Op::Free;
    if (o.family == DragFamily::InReap) e.target = o.reap;
    out_->append(e);
    ++counts_.events;
    ++counts_.earlyReleases;
    early_[o.id] = Early{o.endSeq, o.end == DragEnd::Release};
    ends_.emplace(o.endSeq, o.id);
  }

  DragObjectPass& objects_;
  std::string outPath_;
  std::optional<tracetools::TraceFile> out_;  // opened at the first event, when the sites flag is known
  DragObjectRecord use_;
  bool haveUse_ = false;
  std::unordered_map<std::uint64_t, Early> early_;  // released early, not yet ended
  using EndAt = std::pair<std::uint64_t, std::uint64_t>;  // end seq, id
  std::priority_queue<EndAt, std::vector<EndAt>, std::greater<EndAt>> ends_;
  std::set<std::uint32_t> threads_;  // threads live in the ideal trace
  std::uint64_t sites_ = 0;          // sites defined in the ideal trace
  IdealTraceCounts counts_;
};

}  // namespace

IdealTraceCounts writeIdealTrace(const std::string& tracePath, const LastUseData& lastUse,
                                 const DragResult& analysis, const std::string& outPath,
                                 const DragOptions& options) {
  DragObjectPass objects = runDragObjectPass(tracePath, lastUse, options);
  if (objects.events != analysis.events)
    throw support::Error(tracePath + ": not the trace that was analysed (" +
                             std::to_string(analysis.events) + " events expected)");
  DragTraceInput input(tracePath);
  trace::TraceReader<trace::FdSource>& reader = input.reader();
  IdealWriter w(objects, outPath);
  Event e;
  trace::ReadStatus s;
  std::uint64_t seq = 0;
  while ((s = reader.next(e)) == trace::ReadStatus::Event) {
    if (seq >= analysis.events) break;
    w.apply(e, seq++, reader);
  }
  if (s == trace::ReadStatus::Error)
    throw tracetools::traceError(tracePath, reader.error());
  if (s == trace::ReadStatus::Event || seq != analysis.events)
    throw support::Error(tracePath + ": not the trace that was analysed (" +
                             std::to_string(analysis.events) + " events expected)");
  return w.finish(reader);
}

}  // namespace strata::drag
