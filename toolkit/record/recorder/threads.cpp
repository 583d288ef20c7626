// Thread start and end for the recorder (see threads.hpp).
#include "record/recorder/threads.hpp"

#include <limits.h>
#include <stddef.h>

extern "C" {
void* __libc_malloc(size_t);
void __libc_free(void*);
}

namespace strata::record {
namespace {

ThreadHooks gHooks{};
pthread_key_t gEndKey;
bool gReady = false;

// Any non-null value: a key's destructor runs only for threads whose value is not null.
char gMarker;

// The rounds of key destructors this thread has seen. initial-exec TLS: no allocation on
// first access.
thread_local __attribute__((tls_model("initial-exec"))) unsigned tEndRounds = 0;

// The end key's destructor. The C library runs thread_local destructors first, then the key
// destructors in rounds: a round calls the destructor of every key whose value is set (the
// value is cleared first), and another round follows while any destructor set a value again,
// up to PTHREAD_DESTRUCTOR_ITERATIONS rounds. This one sets its value again until the last
// round, so the thread's end is reported after every other key destructor of the earlier
// rounds (those of the last round that run after this one are not covered: the recorder
// leaves anything the thread does after its end unrecorded).
void endRound(void*) {
  if (++tEndRounds < PTHREAD_DESTRUCTOR_ITERATIONS &&
      ::pthread_setspecific(gEndKey, &gMarker) == 0)
    return;
  gHooks.ended();
}

// What the wrapper passes the new thread.
struct StartBlock {
  void* (*start)(void*);
  void* arg;
  std::uint32_t creator;
};

void* startWrapped(void* raw) {
  const StartBlock b = *static_cast<StartBlock*>(raw);
  __libc_free(raw);
  gHooks.started(b.creator);
  ::pthread_setspecific(gEndKey, &gMarker);
  return b.start(b.arg);  // a return and pthread_exit both end in the key destructors
}

}  // namespace

bool initThreadHooks(ThreadHooks hooks) noexcept {
  gHooks = hooks;
  gReady = ::pthread_key_create(&gEndKey, endRound) == 0;
  return gReady;
}

int createThread(PthreadCreate real, pthread_t* thread, const pthread_attr_t* attr,
                 void* (*start)(void*), void* arg, std::uint32_t creator) noexcept {
  if (!gReady) return real(thread, attr, start, arg);
  auto* b = static_cast<StartBlock*>(__libc_malloc(sizeof(StartBlock)));
  if (b == nullptr) return real(thread, attr, start, arg);
  *b = StartBlock{start, arg, creator};
  const int rc = real(thread, attr, startWrapped, b);
  if (rc != 0) __libc_free(b);
  return rc;
}

}  // namespace strata::record
