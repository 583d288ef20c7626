// computeStats: the statistics of a trace in one streaming pass (TraceReader over the file
// descriptor, memory bounded by one chunk plus a small record per object live at once), and their JSON
// and label formatting. See trace_stats.hpp for the contract.
#include "tracetools/trace_stats.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <unordered_set>
#include <span>
#include <utility>

#include "strata/trace/parallel_reader.hpp"
#include "strata/trace/reader.hpp"
#include "strata/trace/live_table.hpp"
#include "tracetools/reap_members.hpp"
#include "tracetools/trace_error.hpp"

namespace strata::tracetools {
namespace {

using trace::Event;
using trace::kNoObject;
using trace::Op;

// What a live id is: the format gives reaps ids from the same sequence as objects. An id not
// in the table is dead (an object freed, a reap destroyed) or was never created.
enum class Kind : std::uint8_t { LiveObject, LiveReap };

// Per-id state of what is live (a LiveTable, so memory follows the live set): what the
// lifetime histograms and the figures by site need (32 bytes).
struct Slot {
  std::uint64_t size = 0;
  std::uint64_t birthBytes = 0;  // totalBytes right after this object was created
  std::uint64_t birthTime = 0;
  std::uint32_t site = 0;
  Kind kind = Kind::LiveObject;
};

// A site id as a Slot keeps it: one past 32 bits counts as unknown (0), as a site beyond the
// trace's table does, and a table of 2^32 sites would not fit in memory anyway.
std::uint32_t slotSite(std::uint64_t site) {
  return site <= std::numeric_limits<std::uint32_t>::max() ? static_cast<std::uint32_t>(site) : 0;
}

// A log2 histogram being filled: every bucket there is, so adding is one increment; the
// trailing empty ones dropped at the end.
struct Buckets {
  std::array<std::uint64_t, 64> counts{};
  void add(std::uint64_t v) {
    ++counts[v <= 1 ? 0 : static_cast<std::size_t>(63 - __builtin_clzll(v))];
  }
  Log2Histogram histogram() const {
    std::size_t n = counts.size();
    while (n > 0 && counts[n - 1] == 0) --n;
    return Log2Histogram{std::vector<std::uint64_t>(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(n))};
  }
};

// The running state of the pass: figures so far, live totals, per-id slots and reap members.
class Accumulator {
 public:
  // tally: where the figures by site go, or null when they are not wanted.
  Accumulator(TraceStats& s, SiteTally* tally) : s_(s), tally_(tally) {}

  // Applies one event in trace order.
  void apply(const Event& e) {
    ++s_.events;
    ++s_.opCounts[static_cast<std::size_t>(e.op)];
    countThread(e.thread);
    if (e.timeNs > s_.durationNs) s_.durationNs = e.timeNs;
    const bool failed = (e.flags & trace::kFlagFailed) != 0;
    if (failed && e.op != Op::ReapCreate) ++s_.failedAllocations;

    switch (e.op) {
      case Op::Malloc: case Op::Calloc: case Op::Memalign: case Op::New:
        if (!failed) birth(e);
        break;
      case Op::Realloc:
        // realloc(p, 0) that freed (FAILED, size 0) ends p; a failed growth leaves p live.
        if (e.target != kNoObject && (!failed || e.size == 0)) death(e.target, e.timeNs);
        if (!failed) birth(e);
        break;
      case Op::Free: case Op::Delete: case Op::ReapFree:
        if (e.object != kNoObject) death(e.object, e.timeNs);
        break;
      case Op::ReapCreate:
        if (!failed) {
          slots_[e.object] = Slot{0, 0, 0, 0, Kind::LiveReap};
          ++s_.reaps;
          if (e.target != kNoObject) member(e.target, e.object);
        }
        break;
      case Op::ReapMalloc:
        if (!failed) {
          birth(e);
          member(e.target, e.object);
        }
        break;
      case Op::ReapClear:
        clearReap(e.target, e.timeNs);
        break;
      case Op::ReapDestroy:
        clearReap(e.target, e.timeNs);
        if (const Slot* r = slots_.find(e.target); r != nullptr && r->kind == Kind::LiveReap)
          slots_.erase(e.target);
        break;
      case Op::Touch:
        if (const Slot* o = slots_.find(e.object); o != nullptr && o->kind == Kind::LiveObject) {
          ++s_.touchedObjects;
          s_.touchedObjectBytes += o->size;
          s_.touchedBytes += std::min(e.size, o->size);
        }
        break;
      case Op::ThreadStart: case Op::ThreadEnd:
        break;  // no object is created or freed
    }
    if (tally_ != nullptr) tally_->tick(s_.events, e.timeNs, liveBytes_);
  }

  // Fills in the figures derived at the end.
  void finish() {
    s_.sizes = sizes_.histogram();
    s_.lifetimeBytes = lifetimeBytes_.histogram();
    s_.lifetimeNs = lifetimeNs_.histogram();
    s_.neverFreed = liveObjects_;
    s_.averageObjectSize =
        s_.totalObjects == 0 ? 0.0
                             : static_cast<double>(s_.totalBytes) / static_cast<double>(s_.totalObjects);
    s_.totalOverPeak = s_.peakLiveBytes == 0 ? 0.0
                                             : static_cast<double>(s_.totalBytes) /
                                                   static_cast<double>(s_.peakLiveBytes);
  }

 private:
  // Counts a thread the first time it is seen: a bitmap for the usual small indices, a set
  // for large ones (an index may be up to 2^32 - 1, too many for a bitmap).
  void countThread(std::uint32_t thread) {
    if (thread == lastThread_) return;  // most events are on the thread of the one before
    lastThread_ = thread;
    constexpr std::uint32_t kBitmapThreads = 1u << 16;
    bool fresh;
    if (thread < kBitmapThreads) {
      if (thread >= seenThread_.size()) seenThread_.resize(std::size_t{thread} + 1, false);
      fresh = !seenThread_[thread];
      seenThread_[thread] = true;
    } else {
      fresh = seenHighThreads_.insert(thread).second;
    }
    if (fresh) ++s_.threads;
  }

  // A new object of e.size bytes with id e.object.
  void birth(const Event& e) {
    ++s_.totalObjects;
    s_.totalBytes += e.size;
    sizes_.add(e.size);
    slots_[e.object] = Slot{e.size, s_.totalBytes, e.timeNs, slotSite(e.site), Kind::LiveObject};
    liveBytes_ += e.size;
    ++liveObjects_;
    if (tally_ != nullptr) tally_->born(e.object, slotSite(e.site), e.size);
    if (liveBytes_ > s_.peakLiveBytes) {
      s_.peakLiveBytes = liveBytes_;
      if (tally_ != nullptr) tally_->peak(s_.events, e.timeNs);
    }
    if (liveObjects_ > s_.maxLiveObjects) s_.maxLiveObjects = liveObjects_;
  }

  // The end of object `id` (counted in badFrees when it was not a live object).
  void death(std::uint64_t id, std::uint64_t timeNs) {
    const Slot* live = slots_.find(id);
    if (live == nullptr || live->kind != Kind::LiveObject) {
      ++s_.badFrees;
      return;
    }
    const Slot o = *live;
    slots_.eraseFound(live);
    if (tally_ != nullptr) tally_->died(id, o.site, o.size);
    liveBytes_ -= o.size;
    --liveObjects_;
    lifetimeBytes_.add(s_.totalBytes - o.birthBytes);
    lifetimeNs_.add(timeNs >= o.birthTime ? timeNs - o.birthTime : 0);
  }

  void member(std::uint64_t reap, std::uint64_t id) {
    members_.add(reap, id, [this](std::uint64_t m) { return slots_.find(m) != nullptr; });
  }

  // Frees every live object of reap `reap` and of the reaps created under it, and destroys
  // those reaps. Iterative (a worklist), so a deep nesting cannot overflow the stack.
  void clearReap(std::uint64_t reap, std::uint64_t timeNs) {
    std::vector<std::uint64_t> work{reap};
    bool top = true;
    while (!work.empty()) {
      const std::uint64_t r = work.back();
      work.pop_back();
      if (!top) slots_.erase(r);  // a reap created under the cleared one: destroyed with it
      top = false;
      for (const std::uint64_t id : members_.take(r)) {
        const Slot* m = slots_.find(id);
        if (m == nullptr) continue;  // freed already, or a reap destroyed
        if (m->kind == Kind::LiveObject) death(id, timeNs);
        else work.push_back(id);
      }
    }
  }

  TraceStats& s_;
  SiteTally* tally_;
  trace::LiveTable<Slot> slots_;
  ReapMembers members_;
  Buckets sizes_, lifetimeBytes_, lifetimeNs_;
  std::vector<bool> seenThread_;
  std::uint64_t lastThread_ = ~std::uint64_t{0};  // the last thread counted (none: no index is this)
  std::unordered_set<std::uint32_t> seenHighThreads_;
  std::uint64_t liveBytes_ = 0;
  std::uint64_t liveObjects_ = 0;
};

// A double for the JSON, written with 6 significant digits: 0 for NaN and infinities (the
// stats never hold them).
double finite(double v) { return std::isfinite(v) ? v : 0.0; }

// "1.02 us": a nanosecond count with three significant digits and an SI unit.
std::string formatNs(double ns) {
  static const char* const units[] = {"ns", "us", "ms", "s"};
  int u = 0;
  while (ns >= 1000.0 && u < 3) {
    ns /= 1000.0;
    ++u;
  }
  char buf[32];
  if (u == 0) std::snprintf(buf, sizeof buf, "%.0f", ns);
  else std::snprintf(buf, sizeof buf, "%.3g", ns);
  return std::string(buf) + " " + units[u];
}

}  // namespace

std::string_view opName(trace::Op op) {
  static constexpr std::string_view names[trace::kOpCount] = {
      "malloc", "calloc",      "realloc",     "free",       "memalign",   "new",
      "delete", "reap_create", "reap_malloc", "reap_free",  "reap_clear", "reap_destroy",
      "touch",  "thread_start", "thread_end"};
  const auto i = static_cast<std::size_t>(op);
  return i < trace::kOpCount ? names[i] : std::string_view("unknown");
}

std::string bucketLabel(std::size_t bucket, HistogramUnit unit) {
  if (bucket > 63) return "?";
  const std::uint64_t lo = bucket == 0 ? 0 : std::uint64_t{1} << bucket;
  const std::uint64_t hi = (std::uint64_t{2} << bucket) - 1;  // inclusive (wraps to max at 63)
  if (unit == HistogramUnit::Nanoseconds) {
    if (bucket < 10) return std::to_string(lo) + "-" + std::to_string(hi) + " ns";
    const std::string a = formatNs(static_cast<double>(lo));
    const std::string b = formatNs(static_cast<double>(hi) + 1.0);
    // "1.02-2.05 us" when both ends share a unit, else "512 us-1.05 ms".
    const auto sa = a.find(' '), sb = b.find(' ');
    if (a.substr(sa) == b.substr(sb)) return a.substr(0, sa) + "-" + b;
    return a + "-" + b;
  }
  if (bucket < 10) return std::to_string(lo) + "-" + std::to_string(hi) + " B";
  static const char* const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  const std::size_t u = (bucket - 10) / 10;
  const unsigned shift = static_cast<unsigned>(bucket - 10 * (u + 1));
  return std::to_string(std::uint64_t{1} << shift) + "-" +
         std::to_string(std::uint64_t{2} << shift) + " " + units[u];
}

TraceStats computeStats(const std::string& path, SiteStats* sites) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw support::Error(path + ": cannot open: " + std::strerror(errno));
  TraceStats stats;
  SiteTally tally;
  Accumulator acc(stats, sites != nullptr ? &tally : nullptr);
  trace::ParallelReader<trace::FdSource> reader(trace::FdSource{fd});  // decodes on a 2nd core
  std::span<const Event> batch;
  trace::ReadStatus status;
  while ((status = reader.nextBatch(batch)) == trace::ReadStatus::Event)
    for (const Event& e : batch) acc.apply(e);
  ::close(fd);
  if (status == trace::ReadStatus::Error)
    throw traceError(path, reader.error());
  stats.complete = reader.complete();
  stats.formatVersion = reader.version();
  stats.pid = reader.program().pid;
  stats.parentPid = reader.program().parentPid;
  stats.program = reader.program().path;
  acc.finish();
  if (sites != nullptr) *sites = tally.finish(reader.hasSites(), reader.sites());
  return stats;
}

void writeStatsJson(support::JsonWriter& w, const TraceStats& s) {
  w.field("events", s.events).field("threads", s.threads);
  w.field("total_objects", s.totalObjects).field("max_live_objects", s.maxLiveObjects);
  w.field("average_object_size", finite(s.averageObjectSize), 6);
  w.field("total_bytes", s.totalBytes).field("peak_live_bytes", s.peakLiveBytes);
  w.field("total_over_peak", finite(s.totalOverPeak), 6);
  w.field("failed_allocations", s.failedAllocations).field("never_freed", s.neverFreed);
  w.field("bad_frees", s.badFrees).field("reaps", s.reaps).field("duration_ns", s.durationNs);
  w.field("complete", s.complete).field("format_version", s.formatVersion);
  w.field("pid", s.pid).field("parent_pid", s.parentPid).field("program", s.program);
  w.field("touched_objects", s.touchedObjects);
  w.field("touched_object_bytes", s.touchedObjectBytes).field("touched_bytes", s.touchedBytes);
  w.object("ops");
  for (unsigned i = 0; i < trace::kOpCount; ++i)
    w.field(opName(static_cast<trace::Op>(i)), s.opCounts[i]);
  w.end();
  // Histograms: counts[i] is the number of values in [2^i, 2^(i+1)); bucket 0 also holds 0.
  w.array("size_histogram_log2", s.sizes.counts);
  w.array("lifetime_bytes_histogram_log2", s.lifetimeBytes.counts);
  w.array("lifetime_ns_histogram_log2", s.lifetimeNs.counts);
}

std::string toJson(const TraceStats& s) {
  support::JsonWriter w;
  w.object();
  writeStatsJson(w, s);
  return w.end().text();
}

}  // namespace strata::tracetools
