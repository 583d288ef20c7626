// The replay engine (engine.hpp): plan windows from PlanDecoder, the replay loop over them
// (one thread, or one per recorded thread with cross-thread waits), and the measurements.
#include "engine.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <thread>
#include <vector>

#include "plan.hpp"

namespace strata::replay {
namespace {

// ---- allocator policies: static functions, so the loop inlines the calls ----

// The process's allocator, by its standard entry points.
struct SystemPolicy {
  static void* malloc(std::size_t n) noexcept { return std::malloc(n); }
  static void* calloc(std::size_t n) noexcept { return std::calloc(n, 1); }
  static void* realloc(void* p, std::size_t n) noexcept { return std::realloc(p, n); }
  static void* memalign(std::size_t align, std::size_t n) noexcept {
    void* p = nullptr;
    if (align < sizeof(void*)) align = sizeof(void*);
    return ::posix_memalign(&p, align, n) == 0 ? p : nullptr;
  }
  static void* opNew(std::size_t n) noexcept { return ::operator new(n, std::nothrow); }
  static void* opNewAligned(std::size_t n, std::size_t align) noexcept {
    return ::operator new(n, std::align_val_t(align), std::nothrow);
  }
  static void free(void* p) noexcept { std::free(p); }
  static void opDelete(void* p) noexcept { ::operator delete(p); }
  static void opDeleteAligned(void* p, std::size_t align) noexcept {
    ::operator delete(p, std::align_val_t(align));
  }
};

// The do-nothing allocator: every allocation returns the same non-null, maximally aligned
// address; frees do nothing. Replaying on it measures the harness alone.
alignas(4096) unsigned char gNoneBlock[64];
struct NonePolicy {
  static void* malloc(std::size_t) noexcept { return gNoneBlock; }
  static void* calloc(std::size_t) noexcept { return gNoneBlock; }
  static void* realloc(void*, std::size_t) noexcept { return gNoneBlock; }
  static void* memalign(std::size_t, std::size_t) noexcept { return gNoneBlock; }
  static void* opNew(std::size_t) noexcept { return gNoneBlock; }
  static void* opNewAligned(std::size_t, std::size_t) noexcept { return gNoneBlock; }
  static void free(void*) noexcept {}
  static void opDelete(void*) noexcept {}
  static void opDeleteAligned(void*, std::size_t) noexcept {}
};

// Object table value meaning "not created yet" in threaded replay (never a real pointer:
// misaligned and in the last page).
void* const kPending = reinterpret_cast<void*>(~std::uintptr_t{0});
constexpr unsigned char kFillByte = 0xA5;

// A slot some thread sleeps on, waiting for its creator (threaded replay only).
void* const kWaited = reinterpret_cast<void*>(~std::uintptr_t{0} - 1);

// Whether a slot value is one of the two "not created yet" sentinels.
inline bool notReady(void* p) noexcept {
  return reinterpret_cast<std::uintptr_t>(p) >= reinterpret_cast<std::uintptr_t>(kWaited);
}

// The low 32 bits of an object-table slot, the word a waiting thread sleeps on (x86-64 and
// every little-endian target: the low half comes first; a real pointer's low half is never
// kWaited's, 0xfffffffe, which is not 8-byte aligned).
int* slotWord(void** slot) noexcept { return reinterpret_cast<int*>(slot); }

// Sleeps while the slot still holds kWaited (at most 10 ms a call).
void futexWait(void** slot) noexcept {
  const timespec timeout{0, 10'000'000};
  ::syscall(SYS_futex, slotWord(slot), FUTEX_WAIT_PRIVATE, static_cast<int>(0xfffffffeu), &timeout,
            nullptr, 0);
}

// Wakes every thread sleeping on the slot.
void futexWake(void** slot) noexcept {
  ::syscall(SYS_futex, slotWord(slot), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

// How long a threaded replay spins on an object not yet published before it sleeps:
// long when every replay thread has a core (the creator is running and will publish soon),
// short when there are more replay threads than cores (the creator may need this core).
// Set once per replay, before any replay thread starts.
unsigned gSpinLimit = 256;

// What one replay thread counted; padded so threads do not share a cache line.
struct alignas(64) ThreadCounts {
  std::uint64_t failedAllocations = 0;
  std::uint64_t verifyErrors = 0;
};

// The --verify pattern: byte i of object id is (h(id) + i) mod 256, so two overlapping
// objects, or an object moved to the wrong offset, differ somewhere.
inline unsigned char patternBase(std::uint32_t id) noexcept {
  return static_cast<unsigned char>((id * 2654435761u) >> 24);
}
void fillPattern(void* p, std::uint32_t id, std::uint64_t n) noexcept {
  auto* b = static_cast<unsigned char*>(p);
  const unsigned char h = patternBase(id);
  for (std::uint64_t i = 0; i < n; ++i) b[i] = static_cast<unsigned char>(h + i);
}
bool checkPattern(const void* p, std::uint32_t id, std::uint64_t n) noexcept {
  const auto* b = static_cast<const unsigned char*>(p);
  const unsigned char h = patternBase(id);
  for (std::uint64_t i = 0; i < n; ++i)
    if (b[i] != static_cast<unsigned char>(h + i)) return false;
  return true;
}
bool allZero(const void* p, std::uint64_t n) noexcept {
  const auto* b = static_cast<const unsigned char*>(p);
  for (std::uint64_t i = 0; i < n; ++i)
    if (b[i] != 0) return false;
  return true;
}

// The replay loop over one thread's operations of one window. Template parameters fix every
// choice at compile time, so the single-thread loop is a switch over plain calls with no
// atomics or function pointers. kThreaded: objects may come from other threads; a use waits
// until the creating thread has published the pointer (see publish and lookup).
template <class P, bool kWrite, bool kVerify, bool kThreaded>
class Loop {
 public:
  static void run(const PlanOp* op, const PlanOp* end, void** table, const std::uint64_t* sizes,
                  ThreadCounts& c) noexcept {
    for (; op != end; ++op) {
      const std::uint64_t w = op->word;
      const std::uint64_t size = w >> 16;
      const std::uint32_t id = op->object;
      switch (static_cast<OpKind>(w & 0xff)) {
        case OpKind::Malloc:
          created(P::malloc(size), id, size, table, c);
          break;
        case OpKind::Calloc: {
          void* p = P::calloc(size);
          if constexpr (kVerify)
            if (p != nullptr && !allZero(p, size)) ++c.verifyErrors;
          created(p, id, size, table, c);
          break;
        }
        case OpKind::Memalign: {
          const std::size_t align = std::size_t{1} << ((w >> 8) & 0xff);
          void* p = P::memalign(align, size);
          if constexpr (kVerify)
            if (p != nullptr && (reinterpret_cast<std::uintptr_t>(p) & (align - 1)) != 0)
              ++c.verifyErrors;
          created(p, id, size, table, c);
          break;
        }
        case OpKind::New:
          created(P::opNew(size), id, size, table, c);
          break;
        case OpKind::NewAligned: {
          const std::size_t align = std::size_t{1} << ((w >> 8) & 0xff);
          void* p = P::opNewAligned(size, align);
          if constexpr (kVerify)
            if (p != nullptr && (reinterpret_cast<std::uintptr_t>(p) & (align - 1)) != 0)
              ++c.verifyErrors;
          created(p, id, size, table, c);
          break;
        }
        case OpKind::Realloc: {
          const std::uint32_t oldId = op->other;
          void* old = lookup(table, oldId);
          if (old == nullptr) {
            publish(table, id, nullptr);
            break;
          }
          const std::uint64_t oldSize = sizes[oldId];
          void* p = P::realloc(old, size);
          if (p == nullptr) {
            if (size != 0) {
              ++c.failedAllocations;
              P::free(old);
            }
            publish(table, id, nullptr);
            break;
          }
          if constexpr (kVerify) {
            if (!checkPattern(p, oldId, std::min(oldSize, size))) ++c.verifyErrors;
            fillPattern(p, id, size);
          } else if constexpr (kWrite) {
            if (size > oldSize) std::memset(static_cast<char*>(p) + oldSize, kFillByte, size - oldSize);
          }
          publish(table, id, p);
          break;
        }
        case OpKind::Free: {
          void* p = lookup(table, id);
          if (p == nullptr) break;
          if constexpr (kVerify)
            if (!checkPattern(p, id, sizes[id])) ++c.verifyErrors;
          P::free(p);
          break;
        }
        case OpKind::Delete: {
          void* p = lookup(table, id);
          if (p == nullptr) break;
          if constexpr (kVerify)
            if (!checkPattern(p, id, sizes[id])) ++c.verifyErrors;
          P::opDelete(p);
          break;
        }
        case OpKind::DeleteAligned: {
          void* p = lookup(table, id);
          if (p == nullptr) break;
          if constexpr (kVerify)
            if (!checkPattern(p, id, sizes[id])) ++c.verifyErrors;
          P::opDeleteAligned(p, std::size_t{1} << ((w >> 8) & 0xff));
          break;
        }
      }
    }
  }

 private:
  // Stores a new object's pointer. Threaded: an exchange, and a futex wake when a thread
  // marked the slot as waited for (see lookup); no system call otherwise.
  static void publish(void** table, std::uint32_t id, void* p) noexcept {
    if constexpr (kThreaded) {
      if (__atomic_exchange_n(&table[id], p, __ATOMIC_ACQ_REL) == kWaited) futexWake(&table[id]);
    } else {
      table[id] = p;
    }
  }

  // The pointer of an existing object. Threaded: waits until its creator published it: spins
  // briefly, then marks the slot kWaited (compare-and-swap from kPending) and sleeps on a
  // futex on the slot's low 32 bits while it still holds kWaited. The creator's exchange sees
  // the mark and wakes the sleepers; the 10 ms timeout is only a safety net.
  static void* lookup(void** table, std::uint32_t id) noexcept {
    if constexpr (kThreaded) {
      void* p = __atomic_load_n(&table[id], __ATOMIC_ACQUIRE);
      for (unsigned spins = 0; notReady(p) && spins < gSpinLimit; ++spins) {
        __builtin_ia32_pause();
        p = __atomic_load_n(&table[id], __ATOMIC_ACQUIRE);
      }
      while (notReady(p)) {
        if (p == kPending &&
            !__atomic_compare_exchange_n(&table[id], &p, kWaited, false, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE))
          continue;  // p now holds the slot's current value: published, or marked
        futexWait(&table[id]);
        p = __atomic_load_n(&table[id], __ATOMIC_ACQUIRE);
      }
      return p;
    } else {
      return table[id];
    }
  }

  // Writes a new object (or counts a failure) and publishes it.
  static void created(void* p, std::uint32_t id, std::uint64_t size, void** table,
                      ThreadCounts& c) noexcept {
    if (p == nullptr) {
      if (size != 0) ++c.failedAllocations;
    } else if constexpr (kVerify) {
      fillPattern(p, id, size);
    } else if constexpr (kWrite) {
      std::memset(p, kFillByte, size);
    }
    publish(table, id, p);
  }
};

// One replay thread's run function for a window.
using RunFn = void (*)(const PlanOp*, const PlanOp*, void**, const std::uint64_t*, ThreadCounts&);

// Picks the loop instantiation for the options (once per replay, not per op).
template <bool kThreaded>
RunFn pickLoop(const EngineOptions& o) {
  if (o.allocator == EngineAllocator::None) return &Loop<NonePolicy, false, false, kThreaded>::run;
  if (o.verify) return &Loop<SystemPolicy, true, true, kThreaded>::run;
  if (o.writeObjects) return &Loop<SystemPolicy, true, false, kThreaded>::run;
  return &Loop<SystemPolicy, false, false, kThreaded>::run;
}

// ---- measurements ----

// Reads a small /proc file into buf (no allocation); returns the length or 0.
std::size_t readProc(const char* path, char* buf, std::size_t cap) noexcept {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  std::size_t got = 0;
  while (got + 1 < cap) {
    const ssize_t r = ::read(fd, buf + got, cap - 1 - got);
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
  ::close(fd);
  buf[got] = '\0';
  return got;
}

// The process's anonymous resident memory in bytes: statm's resident minus shared pages.
std::uint64_t anonResidentBytes() noexcept {
  char buf[256];
  if (readProc("/proc/self/statm", buf, sizeof buf) == 0) return 0;
  unsigned long long size = 0, resident = 0, shared = 0;
  char* p = buf;
  size = std::strtoull(p, &p, 10);
  resident = std::strtoull(p, &p, 10);
  shared = std::strtoull(p, &p, 10);
  (void)size;
  const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  return resident > shared ? (resident - shared) * page : 0;
}

// One "Name:   N kB" field of /proc/self/status, in bytes (0 when absent).
std::uint64_t statusField(const char* name) noexcept {
  char buf[4096];
  if (readProc("/proc/self/status", buf, sizeof buf) == 0) return 0;
  const char* at = std::strstr(buf, name);
  if (at == nullptr) return 0;
  return std::strtoull(at + std::strlen(name), nullptr, 10) * 1024;
}

// Resets the peak-RSS mark (VmHWM) so the end-of-run peak covers the replay only.
void resetPeakRss() noexcept {
  const int fd = ::open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;
  const ssize_t w = ::write(fd, "5", 1);
  (void)w;
  ::close(fd);
}

double cpuNow() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

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

// Counts events, objects and threads by reading the whole trace (for a trace with no
// trailer). Sets error to the reader's message on a bad trace.
template <class Source>
trace::TraceTotals countingPass(Source src, std::string& error) {
  trace::TraceReader<Source> r(std::move(src));
  trace::Event e;
  trace::ReadStatus s;
  while ((s = r.next(e)) == trace::ReadStatus::Event) {
  }
  if (s == trace::ReadStatus::Error) error = r.error().message();
  return trace::TraceTotals{r.eventsRead(), r.objects(), r.threads()};
}

// ---- the replay ----

// Replays from a source. totals: the trace's events/objects/threads.
template <class Source>
ReplayResult replayWith(Source src, const trace::TraceTotals& totals, const EngineOptions& opt) {
  ReplayResult res;
  if (totals.objects > kMaxReplayObjects) {
    res.status = ReplayStatus::TraceError;
    res.detail = "the trace has " + std::to_string(totals.objects) + " objects, more than the " +
                 std::to_string(kMaxReplayObjects) + " replay supports";
    return res;
  }
  res.allocator = opt.allocator == EngineAllocator::None ? "none" : "glibc";
  res.recordedThreads = totals.threads;
  unsigned threads = opt.threads;
  if (threads == 0) threads = static_cast<unsigned>(std::min<std::uint64_t>(totals.threads, kMaxReplayThreads));
  if (threads == 0) threads = 1;
  if (threads > kMaxReplayThreads) threads = kMaxReplayThreads;
  res.threads = threads;
  const bool threaded = threads > 1;
  gSpinLimit = threads <= std::max(1u, std::thread::hardware_concurrency()) ? 256 : 16;

  std::uint64_t window = opt.windowEvents;
  if (window == 0) window = std::clamp<std::uint64_t>(totals.events / 1000, 1024, 1u << 20);
  const std::uint64_t byteBudget = opt.heapLimit / 16;

  // Everything the replay needs is allocated and touched before the baseline.
  const std::uint64_t objects = std::max<std::uint64_t>(totals.objects, 1);
  std::vector<void*> table(objects, threaded ? kPending : nullptr);
  PlanDecoder<Source> decoder(std::move(src), totals.objects, threads);
  PlanWindow w;
  w.ops.resize(threads);
  for (auto& v : w.ops) v.reserve(threaded ? window / threads + 1024 : window + 1024);
  std::vector<ThreadCounts> counts(threads);
  const RunFn run = threaded ? pickLoop<true>(opt) : pickLoop<false>(opt);

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
    if (res.status == ReplayStatus::Ok && res.failedAllocations != 0)
      res.detail = std::to_string(res.failedAllocations) +
                   " allocations returned null; later operations on those objects were skipped";
    if (res.status == ReplayStatus::Ok && res.verifyErrors != 0) {
      res.status = ReplayStatus::Error;
      res.detail = std::to_string(res.verifyErrors) +
                   " objects did not hold what was written into them (or were misaligned)";
    }
    res.fragmentationPercent =
        res.peakLiveBytes == 0 ? 0.0
                               : (static_cast<double>(res.peakHeapBytes) /
                                      static_cast<double>(res.peakLiveBytes) - 1.0) * 100.0;
    return res;
  };

  bool have = decoder.decodeWindow(w, window, byteBudget);
  if (decoder.failed()) return finish(ReplayStatus::TraceError, decoder.errorMessage());

  // Worker threads 1..threads-1; the calling thread is replay thread 0.
  std::barrier<> sync(static_cast<std::ptrdiff_t>(threads));
  bool stop = false;
  std::vector<std::thread> workers;
  const std::uint64_t* sizes = decoder.sizes();
  void** tab = table.data();
  for (unsigned t = 1; t < threads; ++t)
    workers.emplace_back([&, t] {
      for (;;) {
        sync.arrive_and_wait();
        if (stop) return;
        const auto& ops = w.ops[t];
        run(ops.data(), ops.data() + ops.size(), tab, decoder.sizes(), counts[t]);
        sync.arrive_and_wait();
      }
    });

  resetPeakRss();
  const std::uint64_t baseline = anonResidentBytes();
  const std::uint64_t baselineRss = statusField("VmRSS:");
  if (opt.collectSeries) res.series.push_back(ReplaySample{0, 0, 0, 0});

  double wall = 0, cpu = 0;
  ReplayStatus status = ReplayStatus::Ok;
  std::string detail;
  while (have) {
    const double c0 = cpuNow();
    const auto t0 = std::chrono::steady_clock::now();
    if (threaded) {
      sync.arrive_and_wait();
      run(w.ops[0].data(), w.ops[0].data() + w.ops[0].size(), tab, sizes, counts[0]);
      sync.arrive_and_wait();
    } else {
      run(w.ops[0].data(), w.ops[0].data() + w.ops[0].size(), tab, sizes, counts[0]);
    }
    const auto t1 = std::chrono::steady_clock::now();
    cpu += cpuNow() - c0;
    wall += std::chrono::duration<double>(t1 - t0).count();

    const std::uint64_t anon = anonResidentBytes();
    const std::uint64_t heap = anon > baseline ? anon - baseline : 0;
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
  stop = true;
  if (threaded) sync.arrive_and_wait();
  for (std::thread& t : workers) t.join();

  res.wallSeconds = wall;
  res.cpuSeconds = cpu;
  if (status == ReplayStatus::Ok) {
    const std::uint64_t hwm = statusField("VmHWM:");
    if (hwm > baselineRss) res.peakHeapBytes = std::max(res.peakHeapBytes, hwm - baselineRss);
  }
  // After the measurements: free what the trace left live, so an in-process replay (tests,
  // bench/replay_harness) does not leak. Objects of a window that was never replayed (the
  // trace broke in it) have no pointer yet and are skipped.
  std::vector<PlanOp> leftovers;
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
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    unsigned char tail[kMaxTrailerBytes];
    const auto fileSize = static_cast<std::uint64_t>(st.st_size);
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(fileSize, sizeof tail));
    if (n > 0 && ::pread(fd, tail, n, static_cast<off_t>(fileSize - n)) == static_cast<ssize_t>(n))
      totals = trailerFromTail(tail, n);
  }
  if (!totals) {
    std::string error;
    totals = countingPass(trace::FdSource{fd}, error);
    if (!error.empty()) {
      ::close(fd);
      return fail(error);
    }
    if (::lseek(fd, 0, SEEK_SET) != 0) {
      ::close(fd);
      return fail("cannot read the trace twice (not a regular file?)");
    }
  }
  ReplayResult r = replayWith(trace::FdSource{fd}, *totals, options);
  ::close(fd);
  return r;
}

ReplayResult replayMemory(const unsigned char* data, std::size_t size, const EngineOptions& options) {
  const std::size_t n = std::min(size, kMaxTrailerBytes);
  std::optional<trace::TraceTotals> totals = trailerFromTail(data + size - n, n);
  if (!totals) {
    std::string error;
    totals = countingPass(trace::MemorySource{data, size}, error);
    if (!error.empty()) {
      ReplayResult r;
      r.status = ReplayStatus::TraceError;
      r.detail = error;
      return r;
    }
  }
  return replayWith(trace::MemorySource{data, size}, *totals, options);
}

}  // namespace strata::replay
