// The merger thread (merger.hpp).
#include "merger.hpp"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>

#include "events.hpp"
#include "real.hpp"
#include "threads.hpp"

namespace strata::record {

constinit Merger gMerger;

namespace {

uint64_t gStartAfter = Merger::kStartAfter;  // 0: off

void sleepMicros(unsigned us) {
  timespec ts{0, static_cast<long>(us) * 1000};
  while (::nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

// Merges a batch of the rings' events under the lock; returns how many, or -1 when the
// recording is over.
long mergeBatch() {
  Locked lock;
  if (!on()) return -1;
  return static_cast<long>(drainRingsSlow(false, Merger::kBatch));
}

void* mergerMain(void*) {
  ++tGuard;  // what this thread allocates is the recorder's: never recorded
  unsigned idle = 0;
  for (;;) {
    const long n = mergeBatch();
    if (n < 0) break;
    if (static_cast<uint64_t>(n) == Merger::kBatch) {
      idle = 0;
      continue;
    }
    idle = n > 0 ? 50 : std::min(idle == 0 ? 50u : idle * 2, 2000u);
    sleepMicros(idle);
  }
  gMerger.running.store(false, std::memory_order_release);
  return nullptr;
}

}  // namespace

void configureMerger(const char* setting) noexcept {
  gStartAfter = Merger::kStartAfter;
  if (setting != nullptr && setting[0] != '\0') {
    char* end = nullptr;
    const unsigned long long v = ::strtoull(setting, &end, 10);
    if (::strcmp(setting, "off") == 0) {
      gStartAfter = 0;
    } else if (end != setting && *end == '\0') {
      gStartAfter = std::max<unsigned long long>(v, 1);
    } else {
      static const char kMsg[] =
          "strata-record: STRATA_TRACE_MERGER is not 'off' or a number of calls; using the "
          "default\n";
      const ssize_t ignored = ::write(2, kMsg, sizeof kMsg - 1);
      (void)ignored;
    }
  }
  gMerger.countdown = gRings.enabled ? gStartAfter : 0;
}

void resetMergerAfterFork() noexcept {
  gMerger.running.store(false, std::memory_order_relaxed);
  gMerger.countdown = gRings.enabled ? gStartAfter : 0;
}

void startMerger() noexcept {
  static std::atomic<void*> cache{nullptr};
  Guard g;  // pthread_create allocates the thread's stack and TLS
  const auto real = realSymbol<PthreadCreate>(cache, "pthread_create");
  if (real == nullptr || !on()) return;
  const int savedErrno = errno;
  pthread_attr_t attr;
  if (::pthread_attr_init(&attr) != 0) return;
  ::pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  ::pthread_attr_setstacksize(&attr, 64 << 10);
  sigset_t all, old;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);  // the new thread inherits "all blocked"
  pthread_t thread;
  gMerger.running.store(true, std::memory_order_relaxed);
  if (real(&thread, &attr, mergerMain, nullptr) != 0)
    gMerger.running.store(false, std::memory_order_relaxed);
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ::pthread_attr_destroy(&attr);
  errno = savedErrno;
}

}  // namespace strata::record
