// writeIdealTrace (drag_ideal_trace.hpp): the analysis is the first pass (each object's last
// use, end and family, and the touches); this is the second, which copies the trace, drops the
// releases and touches that move, and writes the early releases from a list sorted by last
// use. Memory: a flag an id, the early list, and the touches that move.
#include "drag_ideal_trace.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "strata/trace/reader.hpp"
#include "trace_file.hpp"

namespace strata::tracetools {
namespace {

using trace::Event;
using trace::kNoObject;
using trace::Op;

// Whether object o is released right after its last use rather than where the program did.
bool releasedEarly(const DragObject& o) {
  if (o.family == DragFamily::Reap || o.end == DragEnd::Realloc) return false;
  if (o.lastUseSeq >= o.endSeq) return false;                  // in use until it ended
  return !(o.end == DragEnd::Release && o.lastUseSeq + 1 == o.endSeq);  // already right after
}

class IdealWriter {
 public:
  IdealWriter(const DragResult& a, const std::string& outPath) : a_(a), outPath_(outPath) {
    early_.assign(a.objects.size(), false);
    for (std::uint64_t id = 0; id < a.objects.size(); ++id)
      if (releasedEarly(a.objects[id])) {
        early_[id] = true;
        order_.push_back(id);
      }
    std::stable_sort(order_.begin(), order_.end(), [&a](std::uint64_t x, std::uint64_t y) {
      return a.objects[x].lastUseSeq < a.objects[y].lastUseSeq;
    });
    for (const DragTouch& t : a.touches)  // in trace order: the last one wins
      if (early_[t.object] && t.seq > a.objects[t.object].lastUseSeq) moved_[t.object] = t;
  }

  // Copies event `seq` (unless it moves) and writes the early releases that follow it.
  template <class Reader>
  void apply(const Event& e, std::uint64_t seq, const Reader& reader) {
    if (!out_) {
      out_.emplace(outPath_, reader.hasSites() ? WithSites::Yes : WithSites::No);
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
    for (; next_ < order_.size() && a_.objects[order_[next_]].lastUseSeq == seq; ++next_)
      release(order_[next_], e);
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
  // Whether event seq is a release or touch of an early object that the ideal trace moves.
  bool moves(const Event& e, std::uint64_t seq) {
    if (e.object == kNoObject || e.object >= early_.size() || !early_[e.object]) return false;
    const DragObject& o = a_.objects[e.object];
    if (trace::opFreesObject(e.op) && o.end == DragEnd::Release && o.endSeq == seq) {
      ++counts_.droppedReleases;
      return true;
    }
    return e.op == Op::Touch && seq > o.lastUseSeq;  // written before the early release
  }

  void write(const Event& e) {
    out_->append(e);
    ++counts_.events;
    if (e.op == Op::ThreadEnd) threads_.erase(e.thread);
    else threads_.insert(e.thread);
  }

  // Writes object id's early release after event `after`, its moved touch first.
  void release(std::uint64_t id, const Event& after) {
    const DragObject& o = a_.objects[id];
    Event e;
    e.thread = threads_.count(after.thread) != 0 || threads_.empty() ? after.thread
                                                                      : *threads_.begin();
    e.timeNs = after.timeNs;
    e.object = id;
    if (const auto t = moved_.find(id); t != moved_.end()) {
      e.op = Op::Touch;
      e.size = t->second.size;
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
  }

  const DragResult& a_;
  std::string outPath_;
  std::optional<TraceFile> out_;  // opened at the first event, when the sites flag is known
  std::vector<bool> early_;       // by id
  std::vector<std::uint64_t> order_;  // early ids by last use
  std::size_t next_ = 0;
  std::unordered_map<std::uint64_t, DragTouch> moved_;  // early id -> its touch that moves
  std::set<std::uint32_t> threads_;  // threads live in the ideal trace
  std::uint64_t sites_ = 0;          // sites defined in the ideal trace
  IdealTraceCounts counts_;
};

}  // namespace

IdealTraceCounts writeIdealTrace(const std::string& tracePath, const DragResult& analysis,
                                 const std::string& outPath) {
  const int fd = ::open(tracePath.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(tracePath + ": cannot read: " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  trace::TraceReader<trace::FdSource> reader(trace::FdSource{fd});
  IdealWriter w(analysis, outPath);
  Event e;
  trace::ReadStatus s;
  std::uint64_t seq = 0;
  while ((s = reader.next(e)) == trace::ReadStatus::Event) {
    if (seq >= analysis.events) break;
    w.apply(e, seq++, reader);
  }
  if (s == trace::ReadStatus::Error)
    throw std::runtime_error(tracePath + ": " + reader.error().message());
  if (s == trace::ReadStatus::Event || seq != analysis.events)
    throw std::runtime_error(tracePath + ": not the trace that was analysed (" +
                             std::to_string(analysis.events) + " events expected)");
  return w.finish(reader);
}

}  // namespace strata::tracetools
