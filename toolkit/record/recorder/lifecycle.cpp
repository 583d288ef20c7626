// The recorder's life cycle (lifecycle.hpp): start, the trace file, exit, fatal signals and
// thread starts and ends; fork is in fork.cpp.
#include "record/recorder/lifecycle.hpp"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <new>

#include "record/recorder/chunk_compression.hpp"
#include "record/recorder/drag.hpp"
#include "record/recorder/events.hpp"
#include "record/recorder/large.hpp"
#include "record/recorder/mapped_memory.hpp"
#include "record/recorder/site_recording.hpp"
#include "strata/platform/page.hpp"
#include "strata/protocol/recorder_environment.hpp"
#include "record/recorder/threads.hpp"
#include "record/recorder/touch_sampling.hpp"

namespace strata::record {

namespace env = protocol::env;

constinit TraceFile gTraceFile;

namespace {

// The address map's first size (it doubles as the live set grows).
constexpr size_t kInitialMapSlots = size_t{1} << 16;
// The table of measured large objects' homes (a fixed size: see prepared_table.hpp).
constexpr size_t kPreparedSlots = size_t{1} << 16;

}  // namespace

// STRATA_TRACE_FILE in the process `strata record` started (STRATA_TRACE_PID), FILE.<pid>
// in any other.
bool openTrace() noexcept {
  char path[sizeof gTraceFile.path + 32];
  if (gTraceFile.pid == gTraceFile.ownerPid) {
    ::snprintf(path, sizeof path, "%s", gTraceFile.path);
  } else {
    ::snprintf(path, sizeof path, "%s.%ld", gTraceFile.path, static_cast<long>(gTraceFile.pid));
  }
  gTraceFile.fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ::memcpy(gTraceFile.opened, path, sizeof gTraceFile.opened);
  gTraceFile.written = 0;
  if (gTraceFile.fd < 0) {
    char msg[sizeof path + 160];
    const int len = ::snprintf(msg, sizeof msg,
                               "strata-record: cannot open trace file %s: %s; running the "
                               "program unrecorded\n",
                               path, ::strerror(errno));
    if (len > 0) {
      const ssize_t ignored = ::write(2, msg, std::min(static_cast<size_t>(len), sizeof msg - 1));
      (void)ignored;
    }
    return false;
  }
  return true;
}

namespace {

// The English text of an errno value without strerror, which may translate it with gettext,
// which calls malloc: the recorder's own, inside which this runs, holding its lock.
const char* errorText(int e) noexcept {
  const char* text = ::strerrordesc_np(e);
  return text != nullptr ? text : "unknown error";
}

}  // namespace

bool TraceFileSink::operator()(const unsigned char* data, size_t len) const noexcept {
  const int savedErrno = errno;  // the program's, whose malloc call this may be inside
  const unsigned long long start = gTraceFile.written;
  while (len != 0) {
    const ssize_t w = ::write(fd, data, len);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const int why = w < 0 ? errno : ENOSPC;
      char msg[sizeof gTraceFile.opened + 200];
      const int n = ::snprintf(msg, sizeof msg,
                               "strata-record: cannot write trace file %s after %llu bytes: %s; "
                               "recording stopped, the program runs on\n",
                               gTraceFile.opened, gTraceFile.written, errorText(why));
      if (n > 0) {
        const ssize_t ignored = ::write(2, msg, std::min(static_cast<size_t>(n), sizeof msg - 1));
        (void)ignored;
      }
      // What this call wrote of its chunk goes: the trace ends at the chunk before, valid.
      if (gTraceFile.written != start && ::ftruncate(fd, static_cast<off_t>(start)) == 0)
        gTraceFile.written = start;
      errno = savedErrno;
      return false;
    }
    gTraceFile.written += static_cast<unsigned long long>(w);
    data += w;
    len -= static_cast<size_t>(w);
  }
  errno = savedErrno;
  return true;
}

void startWriter() noexcept {
  gCore.hot.startNs = nowNs();
  gCore.hot.lastNs = gCore.hot.startNs;
  gCore.hot.nextThread = 0;
  ++gCore.hot.generation;
  gCore.writer = new (gCore.writerStorage) Writer(gCore.buffer, kBufferBytes,
                                                 TraceFileSink{gTraceFile.fd},
                                                 siteBuffer(), chunkCompressor());
  char exe[strata::trace::kMaxProgramPath + 1];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[n > 0 ? n : 0] = '\0';
  gCore.writer->program(static_cast<uint64_t>(gTraceFile.pid), static_cast<uint64_t>(::getppid()),
                        exe);
  startSites();
}

namespace {

// Fatal signal handler: writes out the complete events (not the trailer: the trace is valid
// and marked incomplete), then restores the default action and re-raises, so the program
// dies of the same signal. Does nothing to the trace when this thread was inside the
// recorder (its state may be half updated) or when another thread keeps the lock for more
// than ~0.2 s; never blocks.
void onFatalSignal(int sig) {
  const int savedErrno = errno;
  if (gCore.state.load(std::memory_order_acquire) == kOn && !tHoldsLock &&
      static_cast<pid_t>(::syscall(SYS_getpid)) == gTraceFile.pid) {
    bool locked = false;
    for (int i = 0; i < 2000 && !(locked = gCore.hot.lock.tryLock()); ++i) {
      struct timespec pause{0, 100000};
      ::nanosleep(&pause, nullptr);
    }
    if (locked) {
      drainRings();
      gCore.writer->flush();
      gCore.hot.lock.unlock();
    }
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);  // blocked while the handler runs: delivered, with the default action, on return
  errno = savedErrno;
}

// Every signal whose default action ends the process (core or terminate), so that `prog |
// head` (SIGPIPE), a timer (SIGALRM) or a resource limit still leaves the trace so far.
constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS,  SIGFPE,  SIGILL,  SIGABRT,   SIGTRAP,
                                 SIGSYS,  SIGTERM, SIGINT,  SIGHUP,  SIGQUIT,   SIGPIPE,
                                 SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ, SIGVTALRM};

// Installs onFatalSignal for each fatal signal the program left at its default action (a
// program's own handler, or an ignored signal, stays as it is).
void installSignalHandlers() {
  for (int sig : kFatalSignals) {
    struct sigaction old;
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL ||
        (old.sa_flags & SA_SIGINFO))
      continue;
    struct sigaction sa;
    ::memset(&sa, 0, sizeof sa);
    sa.sa_handler = onFatalSignal;
    ::sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART | SA_ONSTACK;
    ::sigaction(sig, &sa, nullptr);
  }
}

}  // namespace

// Writes the trailer (a clean end) once; later calls in this process pass through.
void finishTrace() noexcept {
  if (gCore.state.load(std::memory_order_acquire) != kOn) return;
  // A vfork child: not ours.
  if (static_cast<pid_t>(::syscall(SYS_getpid)) != gTraceFile.pid) return;
  noteLoadedModules();
  Locked lock;
  if (!on()) return;
  drainRings();
  touchLiveLarge();
  gCore.writer->finish();
  gCore.state.store(kDone, std::memory_order_release);
}

namespace {

// A wrapped thread starts (threads.hpp): its first event, ThreadStart naming its creator.
// The rings are merged first, so that the creator's events before pthread_create come
// before it; the thread's own ring events are stamped after it.
void threadStarted(uint32_t creator) {
  if (!recording()) return;
  const uint64_t t = nowNs();
  Locked lock;
  if (!on()) return;
  drainRings();
  append(Op::ThreadStart, 0, t, 0, kNoObject, creator, 0);
}

// A wrapped thread ends (threads.hpp): its last event, ThreadEnd, after everything it logged
// before (its ring is merged, and recycled if the ring key's destructor has not done so yet).
// Whatever the thread does afterwards (a key destructor of the last round that runs after
// this one, the C library's own per-thread clean-up) is left unrecorded: the recursion guard
// stays raised until the thread is gone.
void threadEnded() {
  if (recording()) {
    const uint64_t t = nowNs();
    Guard g;  // pthread_setspecific may allocate
    Locked lock;
    if (on()) {
      if (tRing != nullptr) drainOwnRing(tRing);
      else drainRings();
      append(Op::ThreadEnd, 0, t, 0, kNoObject, kNoObject, 0);
    }
    giveBackOwnRing();
  }
  ++tGuard;
}

// Starts recording when STRATA_TRACE_FILE is set: runs as the first constructor of this
// library, which the dynamic loader initialises before the program's own libraries.
// Allocations made before this point (by the C and C++ runtimes) are not recorded; freeing
// them later is not recorded either.
__attribute__((constructor(101))) void startRecorder() {
  Guard g;
  const char* file = ::getenv(env::kFile);
  if (file == nullptr || file[0] == '\0') return;
  if (::strlen(file) >= sizeof gTraceFile.path) {
    static const char kMsg[] = "strata-record: STRATA_TRACE_FILE is too long; not recording\n";
    const ssize_t ignored = ::write(2, kMsg, sizeof kMsg - 1);
    (void)ignored;
    return;
  }
  ::strcpy(gTraceFile.path, file);
  // Allocation sites: creates take the lock path, so the rings are left off.
  if (env::settingOn(::getenv(env::kSites)) && !initSites()) {
    static const char kMsg[] =
        "strata-record: no memory for allocation sites; recording without them\n";
    const ssize_t ignored = ::write(2, kMsg, sizeof kMsg - 1);
    (void)ignored;
  }
  // Last uses for `strata drag`: every call takes the lock path, so the rings are left off.
  if (env::settingOn(::getenv(env::kDrag))) initDrag();
  const char* clock = ::getenv(env::kClock);
  if (clock != nullptr && ::strcmp(clock, env::kClockCoarse) == 0) {
    startClock(ClockKind::kCoarse);
  } else if (clock != nullptr && ::strcmp(clock, env::kClockFine) == 0) {
    startClock(ClockKind::kFine);
  } else if (tscUsable()) {  // unset, "tsc" or anything else: tsc where it can be trusted
    startClock(ClockKind::kTsc);
    if (!gSites.on && !gDrag) enableRings();
  }
  gTraceFile.pid = static_cast<pid_t>(::syscall(SYS_getpid));
  // STRATA_TRACE_PID names the process that writes FILE itself; when recording without
  // `strata record`, this first process takes that role and tells its descendants.
  const char* owner = ::getenv(env::kOwnerPid);
  if (owner != nullptr && owner[0] != '\0') {
    gTraceFile.ownerPid = static_cast<pid_t>(::strtol(owner, nullptr, 10));
  } else {
    gTraceFile.ownerPid = gTraceFile.pid;
    char buf[24];
    ::snprintf(buf, sizeof buf, "%ld", static_cast<long>(gTraceFile.pid));
    ::setenv(env::kOwnerPid, buf, 1);
  }
  const size_t page = platform::pageSize();
  if (page > 0 && (page & (page - 1)) == 0) gLarge.pageSize = page;
  gCore.buffer = static_cast<unsigned char*>(mapPages(kBufferBytes));
  if (gCore.buffer == nullptr || !gCore.map.init(kInitialMapSlots) ||
      !gLarge.prepared.init(kPreparedSlots) || !openTrace())
    return;
  gLarge.threshold = largeThreshold(::getenv(env::kTouchMin));
  gTouchSampling.all = env::settingOn(::getenv(env::kTouchAll));
  initChunkCompression();
  strata::record::initThreadHooks({threadStarted, threadEnded});
  startWriter();
  installSignalHandlers();
  ::pthread_atfork(beforeFork, afterForkParent, afterForkChild);
  gCore.state.store(kOn, std::memory_order_release);
}

// Normal exit: runs from the dynamic loader's finalisation, after every atexit handler and
// the program's static destructors, as the last destructor of this library. Writes the
// trailer; what is freed later (by libraries finalised after this one) is not recorded.
__attribute__((destructor(101))) void stopRecorder() { finishTrace(); }

}  // namespace


}  // namespace strata::record
