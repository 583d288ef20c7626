// The replay engine (engine.hpp): plan windows from PlanDecoder, the replay loop over them
// (one thread; a fixed pool with cross-thread waits; or one OS thread per recorded thread,
// started and ended as the program's were), and the measurements.
#include "engine.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <barrier>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#include "lifecycle.hpp"
#include "measure.hpp"
#include "own_memory.hpp"
#include "plan.hpp"
#include "replay_loop.hpp"
#include "scan.hpp"

namespace strata::replay {
namespace {

// The resident bytes of the libraries LD_PRELOAD names (the allocator under test), by their
// resolved paths as /proc/self/smaps shows them; 0 with nothing preloaded.
std::uint64_t preloadedLibraryResidentBytes() noexcept {
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload == nullptr) return 0;
  std::uint64_t total = 0;
  char entry[PATH_MAX], resolved[PATH_MAX];
  for (const char* p = preload; *p != '\0';) {
    std::size_t n = std::strcspn(p, ": ");
    if (n != 0 && n < sizeof entry) {
      std::memcpy(entry, p, n);
      entry[n] = '\0';
      if (::realpath(entry, resolved) != nullptr) total += support::mappingResidentBytes(resolved);
    }
    p += n;
    while (*p == ':' || *p == ' ') ++p;
  }
  return total;
}

using namespace detail;

// ---- trailer lookup ----

// Totals from a trace's trailer, found in the last bytes of the file (the trailer is a 16-byte
// chunk header with magic STTL and count 0, then 3 varints, CRC-checked). Empty when the
// trace has none; a wrong guess is impossible in practice and caught by the reader anyway.
std::optional<trace::TraceTotals> trailerFromTail(const unsigned char* tail, std::size_t n) {
  for (std::size_t start = 0; start + trace::kChunkHeaderSize + 3 <= n; ++start) {
    const unsigned char* h = tail + start;
    const std::size_t len = n - start - trace::kChunkHeaderSize;
    if (trace::getU32(h) != trace::kTrailerChunkMagic || trace::getU32(h + 4) != len ||
        trace::getU32(h + 8) != 0)
      continue;
    const unsigned char* p = h + trace::kChunkHeaderSize;
    if (trace::crc32(p, len) != trace::getU32(h + 12)) continue;
    trace::TraceTotals t;
    const unsigned char* end = p + len;
    if ((p = trace::getVarint(p, end, t.events)) && (p = trace::getVarint(p, end, t.objects)) &&
        (p = trace::getVarint(p, end, t.threads)) && p == end)
      return t;
  }
  return std::nullopt;
}

// Longest trailer: header plus three 10-byte varints.
constexpr std::size_t kMaxTrailerBytes = trace::kChunkHeaderSize + 30;



double monotonicSeconds() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// ---- the replay ----

// Replays from a source. scan: the trace's totals, touches and thread lifecycle.
template <class Source>
ReplayResult replayWith(Source src, const TraceScan& scan, const EngineOptions& opt) {
  ReplayResult res;
  const trace::TraceTotals& totals = scan.totals;
  if (totals.objects > kMaxReplayObjects) {
    res.status = ReplayStatus::TraceError;
    res.detail = "the trace has " + std::to_string(totals.objects) + " objects, more than the " +
                 std::to_string(kMaxReplayObjects) + " replay supports";
    return res;
  }
  res.allocator = opt.allocator == EngineAllocator::None ? "none" : "glibc";
  res.recordedThreads = totals.threads;

  // Threads: as the program had them when the trace says when they started and ended and the
  // user forced no count; else a fixed pool (recorded thread t on replay thread t % threads).
  std::string note;
  bool lifecycle = false;
  if (opt.threads == 0 && scan.threadEvents) {
    if (scan.threadIndexTooLarge)
      note = "the trace names thread indexes of " + std::to_string(kMaxLifecycleThreadIndex) +
             " or more, beyond what replay gives a thread each; replayed on a pool instead";
    else if (scan.maxLiveThreads <= kMaxLifecycleThreads)
      lifecycle = true;
    else
      note = "the trace has " + std::to_string(scan.maxLiveThreads) +
             " threads alive at once, more than the " + std::to_string(kMaxLifecycleThreads) +
             " replay gives a thread each; replayed on a pool instead";
  }
  unsigned threads = opt.threads;
  if (threads == 0) threads = static_cast<unsigned>(std::min<std::uint64_t>(totals.threads, kMaxReplayThreads));
  if (threads == 0) threads = 1;
  if (threads > kMaxReplayThreads) threads = kMaxReplayThreads;
  const bool threaded = lifecycle || threads > 1;
  res.threadMode = lifecycle ? ThreadMode::Lifecycle
                   : threads > 1 ? ThreadMode::Pool
                                 : ThreadMode::Single;
  res.threads = lifecycle ? 0 : threads;  // lifecycle: the most alive at once, set at the end
  const std::uint64_t cores = std::max(1u, std::thread::hardware_concurrency());
  gSpinLimit = (lifecycle ? scan.maxLiveThreads : threads) <= cores ? 256 : 16;

  std::uint64_t window = opt.windowEvents;
  if (window == 0) window = std::clamp<std::uint64_t>(totals.events / 1000, 1024, 1u << 20);
  const std::uint64_t byteBudget = opt.heapLimit / 16;

  // Everything the replay keeps is in the replayer's own memory (own_memory.hpp), allocated
  // before the baseline.
  const std::uint64_t objects = std::max<std::uint64_t>(totals.objects, 1);
  const unsigned lists =
      lifecycle ? static_cast<unsigned>(std::max<std::uint64_t>(totals.threads, 1)) : threads;
  OwnVector<void*> table(objects, threaded ? kPending : nullptr);
  PlanDecoder<Source> decoder(std::move(src), totals.objects, lists,
                              scan.touches.empty() ? nullptr : &scan.touches, lifecycle);
  PlanWindow w;
  w.ops.resize(lists);
  if (!lifecycle)
    for (auto& v : w.ops) v.reserve(threaded ? window / threads + 1024 : window + 1024);
  OwnVector<ThreadCounts> counts(lists);
  OwnVector<ThreadSlot> slots(lifecycle ? lists : 0);
  const RunFn run = pickLoop(opt, threaded);
  const double overheadTicks = threaded ? clockOverheadTicks() : 0.0;

  auto finish = [&](ReplayStatus status, std::string detail) {
    res.status = status;
    res.detail = std::move(detail);
    const PlanCounts& pc = decoder.counts();
    res.events = pc.events;
    res.objects = pc.objects;
    res.peakLiveBytes = pc.peakLiveBytes;
    res.failedEvents = pc.failedEvents;
    for (const ThreadCounts& c : counts) {
      res.failedAllocations += c.failedAllocations;
      res.verifyErrors += c.verifyErrors;
    }
    auto addDetail = [&](const std::string& sentence) {
      res.detail = res.detail.empty() ? sentence : res.detail + "; " + sentence;
    };
    if (res.status == ReplayStatus::Ok && res.failedAllocations != 0)
      addDetail(std::to_string(res.failedAllocations) +
                " allocations returned null; later operations on those objects were skipped");
    if (res.status == ReplayStatus::Ok && res.verifyErrors != 0) {
      res.status = ReplayStatus::Error;
      res.detail = std::to_string(res.verifyErrors) +
                   " objects did not hold what was written into them (or were misaligned)";
    }
    if (!note.empty() && res.status == ReplayStatus::Ok) addDetail(note);
    res.fragmentationPercent =
        res.peakLiveBytes == 0 ? 0.0
                               : (static_cast<double>(res.peakHeapBytes) /
                                      static_cast<double>(res.peakLiveBytes) - 1.0) * 100.0;
    return res;
  };

  bool have = decoder.decodeWindow(w, window, byteBudget);
  if (decoder.failed()) return finish(ReplayStatus::TraceError, decoder.errorMessage());

  // Pool: worker threads 1..threads-1 and the calling thread as replay thread 0, a barrier
  // between windows.
  const bool pool = threaded && !lifecycle;
  std::barrier<> sync(static_cast<std::ptrdiff_t>(pool ? threads : 1));
  bool stop = false;
  std::vector<std::thread> workers;
  const std::uint64_t* sizes = decoder.sizes();
  void** tab = table.data();
  if (pool)
    for (unsigned t = 1; t < threads; ++t)
      workers.emplace_back([&, t] {
        for (;;) {
          sync.arrive_and_wait();
          if (stop) return;
          const auto& ops = w.ops[t];
          run(ops.data(), ops.data() + ops.size(), tab, decoder.sizes(), counts[t]);
          collectAllocatorTime(counts[t]);
          sync.arrive_and_wait();
        }
      });
  Lifecycle lc;
  lc.run = run;
  lc.table = tab;
  lc.sizes = sizes;
  lc.counts = counts.data();
  lc.slots = slots.data();

  // Heap = anonymous resident memory - the replayer's own mappings - the baseline (the
  // process without the allocator, measured by the caller; else the process as it is now).
  support::resetPeakRss();
  const std::uint64_t own0 = ownResidentBytes();
  const std::uint64_t anon0 = support::anonResidentBytes();
  const std::uint64_t file0 = support::fileResidentBytes();
  const std::uint64_t baseline = opt.baselineBytes ? *opt.baselineBytes : (anon0 > own0 ? anon0 - own0 : 0);
  auto heapOf = [&](std::uint64_t anon, std::uint64_t own) {
    return anon > own + baseline ? anon - own - baseline : 0;
  };
  res.startupHeapBytes = heapOf(anon0, own0);
  res.peakHeapBytes = res.startupHeapBytes;
  if (opt.collectSeries) res.series.push_back(ReplaySample{0, 0, res.startupHeapBytes, 0});

  const std::uint64_t ticks0 = ticks();
  const double mono0 = monotonicSeconds();
  double wall = 0, cpu = 0;
  ReplayStatus status = ReplayStatus::Ok;
  std::string detail;
  while (have) {
    const double c0 = cpuNow();
    const auto t0 = std::chrono::steady_clock::now();
    if (lifecycle) {
      if (!lc.runWindow(w, detail)) {
        status = ReplayStatus::Error;
        break;
      }
    } else if (pool) {
      sync.arrive_and_wait();
      run(w.ops[0].data(), w.ops[0].data() + w.ops[0].size(), tab, sizes, counts[0]);
      collectAllocatorTime(counts[0]);
      sync.arrive_and_wait();
    } else {
      run(w.ops[0].data(), w.ops[0].data() + w.ops[0].size(), tab, sizes, counts[0]);
    }
    const auto t1 = std::chrono::steady_clock::now();
    cpu += cpuNow() - c0;
    wall += std::chrono::duration<double>(t1 - t0).count();

    const std::uint64_t heap = heapOf(support::anonResidentBytes(), ownResidentBytes());
    res.peakHeapBytes = std::max(res.peakHeapBytes, heap);
    if (opt.collectSeries) res.series.push_back(ReplaySample{wall, w.endEvent, heap, w.liveBytesAtEnd});
    if (opt.heapLimit != 0 && heap > opt.heapLimit) {
      status = ReplayStatus::HeapLimit;
      detail = "the heap reached " + std::to_string(heap) + " bytes, over the limit of " +
               std::to_string(opt.heapLimit) + ", after " + std::to_string(w.endEvent) + " events";
      break;
    }
    have = decoder.decodeWindow(w, window, byteBudget);
  }
  const std::uint64_t ticks1 = ticks();
  const double mono1 = monotonicSeconds();
  if (pool) {
    stop = true;
    sync.arrive_and_wait();
    for (std::thread& t : workers) t.join();
  }
  if (lifecycle) {
    lc.stopAll(slots.size());
    res.threads = lc.peakLive;
    res.threadsStarted = lc.started;
  } else {
    res.threadsStarted = threads;
  }

  res.wallSeconds = wall;
  res.cpuSeconds = cpu;
  if (threaded && mono1 > mono0 && ticks1 > ticks0) {
    // Ticks to seconds at the rate the clock ran over the replay; the clock's own cost comes
    // off every timed call.
    const double rate = static_cast<double>(ticks1 - ticks0) / (mono1 - mono0);
    double t = 0, calls = 0;
    for (const ThreadCounts& c : counts) {
      t += static_cast<double>(c.allocTicks);
      calls += static_cast<double>(c.allocCalls);
    }
    res.allocatorSeconds = std::max(0.0, t - calls * overheadTicks) / rate;
  }
  res.libraryResidentBytes = preloadedLibraryResidentBytes();
  if (status == ReplayStatus::Ok) {
    // The peak-RSS mark catches a peak between two samples; by the same definition: minus
    // file-backed pages (the more of start and end: the kernel may evict some meanwhile),
    // the replayer's own mappings and the baseline.
    const std::uint64_t hwm = support::procFieldBytes("/proc/self/status", "VmHWM:");
    const std::uint64_t notHeap =
        std::max(file0, support::fileResidentBytes()) + ownResidentBytes() + baseline;
    if (hwm > notHeap) res.peakHeapBytes = std::max(res.peakHeapBytes, hwm - notHeap);
  }
  // After the measurements: free what the trace left live, so an in-process replay (tests,
  // bench/replay_harness) does not leak. Objects of a window that was never replayed (the
  // trace broke in it) have no pointer yet and are skipped.
  OwnVector<PlanOp> leftovers;
  decoder.freeLiveObjects(leftovers);
  std::erase_if(leftovers, [&](const PlanOp& op) { return notReady(table[op.object]); });
  ThreadCounts ignored;
  const PlanOp* first = leftovers.data();
  const PlanOp* last = first + leftovers.size();
  if (opt.allocator == EngineAllocator::None)
    Loop<NonePolicy, false, false, false>::run(first, last, tab, sizes, ignored);
  else
    Loop<SystemPolicy, false, false, false>::run(first, last, tab, sizes, ignored);
  if (decoder.failed()) return finish(ReplayStatus::TraceError, decoder.errorMessage());
  return finish(status, detail);
}

// The scan a replay needs: a version 1 trace with a trailer needs none (no touches, no
// thread events; the trailer has the totals); any other is read once ahead (scan.hpp).
template <class Source>
TraceScan scanIfNeeded(Source src, std::uint16_t version, const std::optional<trace::TraceTotals>& trailer) {
  if (version == 1 && trailer) {
    TraceScan scan;
    scan.totals = *trailer;
    return scan;
  }
  return scanTrace(std::move(src));
}

// The format version from a trace's first bytes (0 when too short: the reader will say why).
std::uint16_t headerVersion(const unsigned char* data, std::size_t n) noexcept {
  return n >= trace::kFileHeaderSize ? trace::getU16(data + 8) : 0;
}

}  // namespace

ReplayResult replayFile(const std::string& path, const EngineOptions& options) {
  auto fail = [](std::string detail) {
    ReplayResult r;
    r.status = ReplayStatus::TraceError;
    r.detail = std::move(detail);
    return r;
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  std::optional<trace::TraceTotals> totals;
  std::uint16_t version = 0;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    unsigned char tail[kMaxTrailerBytes];
    const auto fileSize = static_cast<std::uint64_t>(st.st_size);
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(fileSize, sizeof tail));
    if (n > 0 && ::pread(fd, tail, n, static_cast<off_t>(fileSize - n)) == static_cast<ssize_t>(n))
      totals = trailerFromTail(tail, n);
    unsigned char head[trace::kFileHeaderSize];
    if (::pread(fd, head, sizeof head, 0) == static_cast<ssize_t>(sizeof head))
      version = headerVersion(head, sizeof head);
  }
  const TraceScan scan = scanIfNeeded(trace::FdSource{fd}, version, totals);
  if (!scan.error.empty()) {
    ::close(fd);
    return fail(scan.error);
  }
  if (::lseek(fd, 0, SEEK_SET) != 0) {
    ::close(fd);
    return fail("cannot read the trace twice (not a regular file?)");
  }
  ReplayResult r = replayWith(trace::FdSource{fd}, scan, options);
  ::close(fd);
  return r;
}

ReplayResult replayMemory(const unsigned char* data, std::size_t size, const EngineOptions& options) {
  const std::size_t n = std::min(size, kMaxTrailerBytes);
  const std::optional<trace::TraceTotals> totals = trailerFromTail(data + size - n, n);
  const TraceScan scan =
      scanIfNeeded(trace::MemorySource{data, size}, headerVersion(data, size), totals);
  if (!scan.error.empty()) {
    ReplayResult r;
    r.status = ReplayStatus::TraceError;
    r.detail = scan.error;
    return r;
  }
  return replayWith(trace::MemorySource{data, size}, scan, options);
}

}  // namespace strata::replay
