// The recorder's interposed allocation functions: every entry of the shared list
// (strata/shim/entry_points.hpp) that creates, releases or resizes, generated from it, each
// forwarding to the C library (its __libc_* functions) and recording one event (calls.hpp);
// the entries that allocate nothing (malloc_usable_size, mallinfo2, malloc_stats, malloc_trim)
// are left undefined, so they reach the C library unchanged. Also the process and thread
// functions the recorder must see: _exit, _Exit, quick_exit and pthread_create. The reap and
// region APIs are in reap_entry_points.cpp.
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <new>

#include "record/recorder/calls.hpp"
#include "record/recorder/lifecycle.hpp"
#include "record/recorder/real.hpp"
#include "strata/platform/page.hpp"
#include "strata/shim/entry_points.hpp"
#include "record/recorder/threads.hpp"

namespace strata::record {
namespace {

using strata::trace::kFlagNull;

// log2 of the page size: the alignment valloc and pvalloc give.
unsigned pageAlignLog2() { return alignLog2(platform::pageSize()); }

// A resize that fails before any real call (reallocarray's overflowing size).
void* failedResize(void*, size_t) { return nullptr; }

// Throwing operator new: asks the new_handler again until the allocation succeeds, the
// handler throws, or there is none (then std::bad_alloc), like the standard one. Records New
// (ALIGNED when align is not 0), or New FAILED once when it gives up.
void* recordedNew(size_t n, size_t align) {
  for (;;) {
    void* p = align == 0 ? __libc_malloc(n) : __libc_memalign(align, n);
    if (p != nullptr) {
      if (recording()) recordCreate<Op::New>(0, n, p, alignLog2(align));
      return p;
    }
    std::new_handler h = std::get_new_handler();
    if (h == nullptr) {
      if (recording()) recordCreate<Op::New>(0, n, nullptr, alignLog2(align));
      throw std::bad_alloc();
    }
    try {
      h();
    } catch (...) {
      if (recording()) recordCreate<Op::New>(0, n, nullptr, alignLog2(align));
      throw;
    }
  }
}

// Nothrow operator new: the same loop, nullptr instead of an exception (and no exception
// thrown inside when there is no handler, so the trace shows no bad_alloc allocation).
void* recordedNewNothrow(size_t n, size_t align) noexcept {
  for (;;) {
    void* p = align == 0 ? __libc_malloc(n) : __libc_memalign(align, n);
    std::new_handler h = p != nullptr ? nullptr : std::get_new_handler();
    bool failed = p == nullptr && h == nullptr;
    if (p == nullptr && h != nullptr) {
      try {
        h();
      } catch (...) {
        failed = true;
      }
    }
    if (p != nullptr || failed) {
      if (recording()) recordCreate<Op::New>(0, n, p, alignLog2(align));
      return p;
    }
  }
}

// What each entry of the shared list means (its role), recorded: the members the generated
// definitions below call.
struct Recorded {
  static void* malloc(size_t n) noexcept {
    void* p = __libc_malloc(n);
    if (recording()) recordCreate<Op::Malloc>(0, n, p, 0);
    return p;
  }

  static void free(void* p) noexcept {
    if (recording()) recordFree<Op::Free>(p);
    __libc_free(p);
  }

  static void* calloc(size_t nmemb, size_t size) noexcept {
    void* p = __libc_calloc(nmemb, size);
    if (recording()) {
      size_t total;
      if (__builtin_mul_overflow(nmemb, size, &total)) total = SIZE_MAX;
      recordCreate<Op::Calloc>(0, total, p, 0);
    }
    return p;
  }

  static void* realloc(void* p, size_t n) noexcept {
    if (!recording()) return __libc_realloc(p, n);
    if (p == nullptr) {
      void* q = __libc_realloc(nullptr, n);
      recordCreate<Op::Realloc>(kFlagNull, n, q, 0);
      return q;
    }
    return recordResize(Op::Realloc, p, n, __libc_realloc);
  }

  static void* reallocarray(void* p, size_t nmemb, size_t size) noexcept {
    size_t total;
    if (__builtin_mul_overflow(nmemb, size, &total)) {
      if (recording()) {
        if (p == nullptr) {
          recordCreate<Op::Realloc>(kFlagNull, SIZE_MAX, nullptr, 0);
        } else {
          recordResize(Op::Realloc, p, SIZE_MAX, failedResize);
        }
      }
      errno = ENOMEM;
      return nullptr;
    }
    return realloc(p, total);
  }

  static void* memalign(size_t align, size_t n) noexcept {
    void* p = __libc_memalign(align, n);
    if (recording()) recordCreate<Op::Memalign>(0, n, p, alignLog2(align));
    return p;
  }

  static int posix_memalign(void** out, size_t align, size_t n) noexcept {
    if (align == 0 || (align & (align - 1)) != 0 || align % sizeof(void*) != 0) return EINVAL;
    const int savedErrno = errno;
    void* p = __libc_memalign(align, n);
    errno = savedErrno;
    if (recording()) recordCreate<Op::Memalign>(0, n, p, alignLog2(align));
    if (p == nullptr) return ENOMEM;
    *out = p;
    return 0;
  }

  static void* aligned_alloc(size_t align, size_t n) noexcept {
    if (align == 0 || (align & (align - 1)) != 0) {
      errno = EINVAL;
      return nullptr;
    }
    return memalign(align, n);
  }

  static void* valloc(size_t n) noexcept {
    void* p = __libc_valloc(n);
    if (recording()) recordCreate<Op::Memalign>(0, n, p, pageAlignLog2());
    return p;
  }

  static void* pvalloc(size_t n) noexcept {
    void* p = __libc_pvalloc(n);
    if (recording()) recordCreate<Op::Memalign>(0, n, p, pageAlignLog2());
    return p;
  }

  static void* operatorNew(size_t n) { return recordedNew(n, 0); }
  static void* operatorNew(size_t n, std::align_val_t a) {
    return recordedNew(n, static_cast<size_t>(a));
  }
  static void* operatorNewNothrow(size_t n) noexcept { return recordedNewNothrow(n, 0); }
  static void* operatorNewNothrow(size_t n, std::align_val_t a) noexcept {
    return recordedNewNothrow(n, static_cast<size_t>(a));
  }

  static void operatorDelete(void* p) noexcept {
    if (recording()) recordFree<Op::Delete>(p);
    __libc_free(p);
  }
};

}  // namespace
}  // namespace strata::record

// The definitions, one per entry of the list: a recorded kind calls its role in Recorded; a
// Query or LibcAlias entry is not defined here (see the top of this file).
#define STRATA_RECORD_DEFINE_(ret, name, params, spec, role, args)                            \
  [[gnu::visibility("default")]] ret name params spec {                                       \
    return ::strata::record::Recorded::role args;                                             \
  }
#define STRATA_RECORD_Create(...) STRATA_RECORD_DEFINE_(__VA_ARGS__)
#define STRATA_RECORD_Release(...) STRATA_RECORD_DEFINE_(__VA_ARGS__)
#define STRATA_RECORD_Resize(...) STRATA_RECORD_DEFINE_(__VA_ARGS__)
#define STRATA_RECORD_Query(...)
#define STRATA_RECORD_LibcAlias(...)
#define STRATA_RECORD_ENTRY_(ctx, kind, ret, name, params, spec, role, args) \
  STRATA_RECORD_##kind(ret, name, params, spec, role, args)

extern "C" {
STRATA_C_ENTRY_POINTS(STRATA_RECORD_ENTRY_, unused)
}
STRATA_CXX_ENTRY_POINTS(STRATA_RECORD_ENTRY_, unused)

using strata::record::finishTrace;
using strata::record::Guard;

// _exit and _Exit: the trace gets its trailer (everything was recorded), then the process
// ends at once, as the real ones do.
STRATA_EXPORT void _exit(int status) {
  finishTrace();
  for (;;) ::syscall(SYS_exit_group, status);
}
STRATA_EXPORT void _Exit(int status) {
  finishTrace();
  for (;;) ::syscall(SYS_exit_group, status);
}

// pthread_create: the new thread runs through the wrapper of threads.hpp, which reports its
// start (ThreadStart, naming this thread, which gets its index here if it has none) and its
// end (ThreadEnd). The real function is the next definition (the C library's).
STRATA_EXPORT int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                                 void* (*start)(void*), void* arg) noexcept {
  static std::atomic<void*> cache{nullptr};
  const auto real =
      strata::record::realSymbol<strata::record::PthreadCreate>(cache, "pthread_create");
  if (real == nullptr) return EAGAIN;
  if (!strata::record::recording()) return real(thread, attr, start, arg);
  uint32_t creator;
  {
    strata::record::Locked lock;
    creator = strata::record::threadIndex();
  }
  return strata::record::createThread(real, thread, attr, start, arg, creator);
}

// quick_exit: the trailer is written, then the real quick_exit runs the at_quick_exit
// handlers (what they allocate is not recorded) and ends the process through the C library's
// internal _exit, which the _exit above does not see.
STRATA_EXPORT void quick_exit(int status) noexcept {
  finishTrace();
  void (*real)(int);
  {
    Guard g;
    real = reinterpret_cast<void (*)(int)>(::dlsym(RTLD_NEXT, "quick_exit"));
  }
  if (real != nullptr) real(status);
  for (;;) ::syscall(SYS_exit_group, status);
}
