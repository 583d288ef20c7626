// The replay engine (engine.hpp): plan windows from PlanDecoder, the replay loop over them
// (one thread; a fixed pool with cross-thread waits, pool.hpp; or one OS thread per recorded
// thread, started and ended as the program's were, replay_threads.hpp), and the measurements.
//
// replayWith runs a replay in phases, each a function or a method of Replay below: how the
// threads replay and how long a window is; the tables, in the replayer's own memory; the first
// window; the replay threads; the heap at the start; window after window, the heap sampled
// after each; the threads stopped; the end-of-run figures; what the trace left live freed; the
// result.
#include "replay/engine.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <thread>

#include "replay/replay_threads.hpp"
#include "replay/measure.hpp"
#include "replay/own_memory.hpp"
#include "replay/plan.hpp"
#include "replay/pool.hpp"
#include "replay/replay_loop.hpp"
#include "replay/scan.hpp"

namespace strata::replay {
namespace {

using namespace detail;

// A replay that could not read its trace; detail is the reader's message (or the engine's).
ReplayResult traceError(std::string detail) {
  ReplayResult r;
  r.status = ReplayStatus::TraceError;
  r.detail = std::move(detail);
  return r;
}

// ---- how the threads replay, and how long a window is ----

// Threads replay as the program had them (lifecycle) when the trace says when they started
// and ended and the user forced no count; else on a fixed pool (recorded thread t on replay
// thread t % threads), which is a single thread when threads is 1.
struct ThreadPlan {
  bool lifecycle = false;
  unsigned threads = 1;   // pool and single: the replay threads
  unsigned lists = 1;     // operation lists a window has: recorded threads (lifecycle) or threads
  bool threaded = false;  // more than one replay thread: objects may come from other threads
  bool pool = false;
  ThreadMode mode = ThreadMode::Single;
  std::string note;       // why a trace with thread events replays on the pool instead
};

ThreadPlan planThreads(const TraceScan& scan, const EngineOptions& opt) {
  ThreadPlan p;
  if (opt.threads == 0 && scan.threadEvents) {
    if (scan.threadIndexTooLarge)
      p.note = "the trace names thread indexes of " + std::to_string(kMaxLifecycleThreadIndex) +
               " or more, beyond what replay gives a thread each; replayed on a pool instead";
    else if (scan.maxLiveThreads <= kMaxLifecycleThreads)
      p.lifecycle = true;
    else
      p.note = "the trace has " + std::to_string(scan.maxLiveThreads) +
               " threads alive at once, more than the " + std::to_string(kMaxLifecycleThreads) +
               " replay gives a thread each; replayed on a pool instead";
  }
  const trace::TraceTotals& totals = scan.totals;
  unsigned threads = opt.threads;
  if (threads == 0) threads = static_cast<unsigned>(std::min<std::uint64_t>(totals.threads, kMaxReplayThreads));
  if (threads == 0) threads = 1;
  if (threads > kMaxReplayThreads) threads = kMaxReplayThreads;
  p.threads = threads;
  p.threaded = p.lifecycle || threads > 1;
  p.pool = p.threaded && !p.lifecycle;
  p.mode = p.lifecycle    ? ThreadMode::Lifecycle
           : threads > 1  ? ThreadMode::Pool
                          : ThreadMode::Single;
  p.lists = p.lifecycle ? static_cast<unsigned>(std::max<std::uint64_t>(totals.threads, 1)) : threads;
  return p;
}

// How long a threaded replay spins on an object not yet published before it sleeps
// (replay_loop.hpp): long when every replay thread has a core, short when they outnumber them.
unsigned spinLimit(const ThreadPlan& p, const TraceScan& scan) {
  const std::uint64_t cores = std::max(1u, std::thread::hardware_concurrency());
  return (p.lifecycle ? scan.maxLiveThreads : p.threads) <= cores ? 256 : 16;
}

// Events a window holds (and so a sample covers): about 1/1000 of the trace unless fixed.
std::uint64_t windowEvents(const trace::TraceTotals& totals, const EngineOptions& opt) {
  if (opt.windowEvents != 0) return opt.windowEvents;
  return std::clamp<std::uint64_t>(totals.events / 1000, 1024, 1u << 20);
}

// How the replay of the windows ended.
struct Ending {
  ReplayStatus status = ReplayStatus::Ok;
  std::string detail;
};

// ---- the replay ----

// One replay from a source: the phases replayWith calls in order, and what they share.
template <class Source>
class Replay {
 public:
  // The tables: the object table, the decoder's per-object state, the window's operation
  // lists, the per-thread counts and lifecycle slots, all in the replayer's own memory
  // (own_memory.hpp), before the heap is first measured. The object table and the decoder's
  // state grow with the most objects live at once (plan.hpp), as windows are decoded.
  Replay(Source src, const TraceScan& scan, const EngineOptions& opt, ThreadPlan plan)
      : opt_(opt), plan_(std::move(plan)), window_(windowEvents(scan.totals, opt)),
        decoder_(std::move(src), plan_.lists, scan.touches.empty() ? nullptr : &scan.touches,
                 plan_.lifecycle),
        w_(emptyWindow()), counts_(plan_.lists), slots_(plan_.lifecycle ? plan_.lists : 0),
        run_(pickLoop(opt, plan_.threaded)),
        overheadTicks_(plan_.threaded ? clockOverheadTicks() : 0.0) {
    res_.allocator = opt.allocator == EngineAllocator::None ? "none" : "glibc";
    res_.recordedThreads = scan.totals.threads;
    res_.threadMode = plan_.mode;
    res_.threads = plan_.lifecycle ? 0 : plan_.threads;  // lifecycle: the most alive, at the end
  }

  // Decodes the first window, before anything is measured (decoding never is). False when the
  // trace cannot be read.
  bool decodeFirstWindow() {
    decodeWindow();
    return !decoder_.failed();
  }

  // The pool's workers start now; lifecycle threads start in the windows where the program's
  // did (replay_threads.hpp), the coordinator is readied for them.
  void startThreads() {
    pool_.emplace(plan_.pool, plan_.threads, w_, run_, counts_.data());
    lc_.run = run_;
    lc_.counts = counts_.data();
    lc_.slots = slots_.data();
  }

  // The heap as the replay starts, before the first replayed call: the allocator's start-up
  // (measure.hpp), and the first sample.
  void startMeasuring() {
    meter_.start(opt_.baselineBytes);
    measuring_ = true;
    res_.startupHeapBytes = meter_.atStart();
    res_.peakHeapBytes = res_.startupHeapBytes;
    if (opt_.collectSeries) res_.series.push_back(ReplaySample{0, 0, res_.startupHeapBytes, 0});
  }

  // Replays window after window, the clocks running only around each window's replay, and
  // samples the heap after each: until the trace ends, the heap passes the limit, or a
  // lifecycle thread cannot start.
  Ending replayWindows() {
    Ending end;
    double wall = 0, cpu = 0;
    span_.start();
    while (have_) {
      const double c0 = cpuNow();
      const auto t0 = std::chrono::steady_clock::now();
      if (!runWindow()) {
        end = Ending{ReplayStatus::Error, std::move(lc_.failure)};
        break;
      }
      const auto t1 = std::chrono::steady_clock::now();
      cpu += cpuNow() - c0;
      wall += std::chrono::duration<double>(t1 - t0).count();
      if (!sampleHeap(wall, end)) break;
      decodeWindow();
    }
    span_.stop();
    res_.wallSeconds = wall;
    res_.cpuSeconds = cpu;
    return end;
  }

  // Ends the pool's workers and the lifecycle threads still alive.
  void stopThreads() {
    if (plan_.pool) pool_->stop();
    if (plan_.lifecycle) {
      lc_.stopAll(slots_.size());
      res_.threads = lc_.peakLive;
      res_.threadsStarted = lc_.started;
    } else {
      res_.threadsStarted = plan_.threads;
    }
  }

  // The end-of-run figures: allocator time (threaded replays), the allocator library's
  // resident pages, and for a replay that ran to its end the peak the peak-RSS mark shows.
  void measureEnd(const Ending& end) {
    if (plan_.threaded) res_.allocatorSeconds = span_.allocatorSeconds(counts_, overheadTicks_);
    res_.libraryResidentBytes = preloadedLibraryResidentBytes();
    if (end.status == ReplayStatus::Ok)
      res_.peakHeapBytes = std::max(res_.peakHeapBytes, meter_.peakByHighWaterMark());
  }

  // After the measurements: frees what the trace left live, so an in-process replay (tests,
  // bench/replay_harness) does not leak. Objects of a window that was never replayed (the
  // trace broke in it) have no pointer yet and are skipped.
  void freeLeftovers() {
    OwnVector<PlanOp> leftovers;
    decoder_.freeLiveObjects(leftovers);
    std::erase_if(leftovers, [&](const PlanOp& op) { return notReady(table_[op.object]); });
    ThreadCounts ignored;
    const PlanOp* first = leftovers.data();
    const PlanOp* last = first + leftovers.size();
    if (opt_.allocator == EngineAllocator::None)
      Loop<NonePolicy, false, false, false>::run(first, last, table_.data(), decoder_.sizes(), ignored);
    else
      Loop<SystemPolicy, false, false, false>::run(first, last, table_.data(), decoder_.sizes(), ignored);
  }

  // The reader's error, when the trace broke (ends the replay as a trace error).
  std::optional<Ending> traceBroke() const {
    if (!decoder_.failed()) return std::nullopt;
    return Ending{ReplayStatus::TraceError, decoder_.errorMessage()};
  }

  // The result: the counts, the failures the replay threads counted, and what the detail says.
  ReplayResult finish(Ending end) {
    res_.status = end.status;
    res_.detail = std::move(end.detail);
    const PlanCounts& pc = decoder_.counts();
    res_.events = pc.events;
    res_.objects = pc.objects;
    res_.peakLiveBytes = pc.peakLiveBytes;
    res_.failedEvents = pc.failedEvents;
    for (const ThreadCounts& c : counts_) {
      res_.failedAllocations += c.failedAllocations;
      res_.verifyErrors += c.verifyErrors;
    }
    if (res_.status == ReplayStatus::Ok && res_.failedAllocations != 0)
      addDetail(std::to_string(res_.failedAllocations) +
                " allocations returned null; later operations on those objects were skipped");
    if (res_.status == ReplayStatus::Ok && res_.verifyErrors != 0) {
      res_.status = ReplayStatus::Error;
      res_.detail = std::to_string(res_.verifyErrors) +
                    " objects did not hold what was written into them (or were misaligned)";
    }
    if (!plan_.note.empty() && res_.status == ReplayStatus::Ok) addDetail(plan_.note);
    res_.fragmentationPercent =
        res_.peakLiveBytes == 0 ? 0.0
                                : (static_cast<double>(res_.peakHeapBytes) /
                                       static_cast<double>(res_.peakLiveBytes) - 1.0) * 100.0;
    return std::move(res_);
  }

 private:
  // A window also ends once its allocations reach 1/16 of the heap limit, so the replay stops
  // at most about limit/16 past it.
  std::uint64_t byteBudget() const noexcept { return opt_.heapLimit / 16; }

  PlanWindow emptyWindow() const {
    PlanWindow w;
    w.ops.resize(plan_.lists);
    if (!plan_.lifecycle)
      for (auto& v : w.ops) v.reserve(plan_.threaded ? window_ / plan_.threads + 1024 : window_ + 1024);
    return w;
  }

  // Decodes the next window, and grows the object table to the slots it names: a new slot
  // holds kPending until its object is created (replay_loop.hpp). When the replayer's own
  // tables grew meanwhile, the peak the peak-RSS mark showed before is kept and the mark reset
  // (HeapMeter::foldPeak), so the moment a table held its old and new copy is not heap. The
  // tables grow only when the slots (the objects live, and those a window frees) reach a new
  // power of two, so this is rare.
  void decodeWindow() {
    const std::uint64_t mappings = ownMappingsMade();
    const std::uint64_t hwmBefore = measuring_ ? meter_.peakByHighWaterMark() : 0;
    have_ = decoder_.decodeWindow(w_, window_, byteBudget());
    const std::uint64_t slots = decoder_.slotCount();
    if (slots > table_.size())
      table_.resize(std::max<std::uint64_t>(slots, table_.size() * 2), kPending);
    if (measuring_ && ownMappingsMade() != mappings) meter_.foldPeak(hwmBefore);
  }

  // Replays the current window on the replay threads; false when a lifecycle thread cannot
  // start (lc_.failure says why).
  bool runWindow() {
    if (plan_.lifecycle) {
      lc_.table = table_.data();
      lc_.sizes = decoder_.sizes();
      return lc_.runWindow(w_);
    }
    if (plan_.pool) pool_->runWindow(table_.data(), decoder_.sizes());
    else run_(w_.ops[0].data(), w_.ops[0].data() + w_.ops[0].size(), table_.data(), decoder_.sizes(),
              counts_[0]);
    return true;
  }

  // The heap after a window; false when it is over the limit (end says so).
  bool sampleHeap(double wall, Ending& end) {
    const std::uint64_t heap = meter_.now();
    res_.peakHeapBytes = std::max(res_.peakHeapBytes, heap);
    if (opt_.collectSeries)
      res_.series.push_back(ReplaySample{wall, w_.endEvent, heap, w_.liveBytesAtEnd});
    if (opt_.heapLimit == 0 || heap <= opt_.heapLimit) return true;
    end.status = ReplayStatus::HeapLimit;
    end.detail = "the heap reached " + std::to_string(heap) + " bytes, over the limit of " +
                 std::to_string(opt_.heapLimit) + ", after " + std::to_string(w_.endEvent) + " events";
    return false;
  }

  void addDetail(const std::string& sentence) {
    res_.detail = res_.detail.empty() ? sentence : res_.detail + "; " + sentence;
  }

  const EngineOptions& opt_;
  const ThreadPlan plan_;
  const std::uint64_t window_;
  ReplayResult res_;
  OwnVector<void*> table_;
  PlanDecoder<Source> decoder_;
  PlanWindow w_;
  OwnVector<ThreadCounts> counts_;
  OwnVector<ThreadSlot> slots_;
  const RunFn run_;
  const double overheadTicks_;
  bool have_ = false;  // a decoded window waits to be replayed
  bool measuring_ = false;  // the heap meter has started
  std::optional<Pool> pool_;
  Lifecycle lc_;
  HeapMeter meter_;
  TickSpan span_;
};

// Replays from a source. scan: the trace's totals, touches and thread lifecycle.
template <class Source>
ReplayResult replayWith(Source src, const TraceScan& scan, const EngineOptions& opt) {
  ThreadPlan plan = planThreads(scan, opt);
  gSpinLimit = spinLimit(plan, scan);  // before any replay thread starts
  Replay<Source> replay(std::move(src), scan, opt, std::move(plan));
  if (!replay.decodeFirstWindow()) return replay.finish(*replay.traceBroke());
  replay.startThreads();
  replay.startMeasuring();
  const Ending end = replay.replayWindows();
  replay.stopThreads();
  replay.measureEnd(end);
  replay.freeLeftovers();
  return replay.finish(replay.traceBroke().value_or(end));
}

}  // namespace

ReplayResult replayFile(const std::string& path, const EngineOptions& options) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return traceError(std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  std::optional<trace::TraceTotals> totals;
  std::uint16_t version = 0;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    unsigned char tail[trace::kMaxTrailerBytes];
    const auto fileSize = static_cast<std::uint64_t>(st.st_size);
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(fileSize, sizeof tail));
    if (n > 0 && ::pread(fd, tail, n, static_cast<off_t>(fileSize - n)) == static_cast<ssize_t>(n))
      totals = trace::trailerFromTail(tail, n);
    unsigned char head[trace::kFileHeaderSize];
    if (::pread(fd, head, sizeof head, 0) == static_cast<ssize_t>(sizeof head))
      version = headerVersion(head, sizeof head);
  }
  const TraceScan scan = scanIfNeeded(trace::FdSource{fd}, version, totals);
  if (!scan.error.empty()) {
    ::close(fd);
    return traceError(scan.error);
  }
  if (::lseek(fd, 0, SEEK_SET) != 0) {
    ::close(fd);
    return traceError("cannot read the trace twice (not a regular file?)");
  }
  ReplayResult r = replayWith(trace::FdSource{fd}, scan, options);
  ::close(fd);
  return r;
}

ReplayResult replayMemory(const unsigned char* data, std::size_t size, const EngineOptions& options) {
  const std::size_t n = std::min(size, trace::kMaxTrailerBytes);
  const std::optional<trace::TraceTotals> totals = trace::trailerFromTail(data + size - n, n);
  const TraceScan scan =
      scanIfNeeded(trace::MemorySource{data, size}, headerVersion(data, size), totals);
  if (!scan.error.empty()) return traceError(scan.error);
  return replayWith(trace::MemorySource{data, size}, scan, options);
}

}  // namespace strata::replay
