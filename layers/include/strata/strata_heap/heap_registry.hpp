// The registry of live thread-binding heaps and each thread's binding to one of them: which
// instance (by id) and which of its per-thread heaps. One process-wide pthread key whose
// destructor orphans the exiting thread's heap in the instance it is bound to, and never
// touches an instance that was destroyed (ids are never reused).
#pragma once
#include <pthread.h>

#include <cstdint>

#include "strata/detail/spin_lock.hpp"

namespace strata::detail {

// A thread's binding: which instance (by id) and which of its heaps.
struct HeapBinding {
  std::uint64_t instance;
  void* heap;
  bool exited;  // the thread-exit destructor ran: use the shared heap from now on
};

// Zero-initialised and trivially destructible: no TLS constructor, no __cxa_thread_atexit.
// Always named directly (never through a reference): GCC 12's UBSan null check of a
// reference to an initial-exec TLS object tests stale flags and reports a false null.
inline thread_local HeapBinding heapBinding __attribute__((tls_model("initial-exec")));

inline void heapThreadExit(void*) noexcept;

struct HeapRegistry {
  using OrphanFn = void (*)(void* instance, void* heap);
  struct Entry {
    std::uint64_t id;
    void* instance;
    OrphanFn orphan;
  };
  static constexpr unsigned kMax = 64;
  SpinLock lock;
  bool keyMade = false;
  pthread_key_t key = 0;
  std::uint64_t nextId = 1;
  Entry live[kMax] = {};

  // Registers an instance; its id. Past kMax live instances, threads of the newest ones are
  // not orphaned at exit (their heaps stay theirs until the instance goes).
  std::uint64_t add(void* instance, OrphanFn orphan) noexcept {
    lock.lock();
    if (!keyMade)
      keyMade = ::pthread_key_create(&key, [](void* v) { heapThreadExit(v); }) == 0;
    const std::uint64_t id = nextId++;
    for (Entry& e : live) {
      if (e.id == 0) {
        e = {id, instance, orphan};
        break;
      }
    }
    lock.unlock();
    return id;
  }

  void remove(std::uint64_t id) noexcept {
    lock.lock();
    for (Entry& e : live)
      if (e.id == id) e = {};
    lock.unlock();
    if (heapBinding.instance == id) {
      heapBinding.instance = 0;
      heapBinding.heap = nullptr;
    }
  }

  // Binds the calling thread. The binding is stored before pthread_setspecific, which may
  // itself allocate.
  void bind(std::uint64_t id, void* heap, void* instance) noexcept {
    heapBinding.heap = heap;
    heapBinding.instance = id;
    if (keyMade) ::pthread_setspecific(key, instance);
  }

  // The calling thread leaves the heap it is bound to (orphaning it), if any.
  void unbind() noexcept {
    if (heapBinding.instance == 0) return;
    lock.lock();
    orphanLocked();
    lock.unlock();
  }

  // Orphans the calling thread's heap, if its instance still lives; `lock` is held.
  void orphanLocked() noexcept {
    for (Entry& e : live)
      if (e.id != 0 && e.id == heapBinding.instance) e.orphan(e.instance, heapBinding.heap);
    heapBinding.instance = 0;
    heapBinding.heap = nullptr;
  }
};

constinit inline HeapRegistry heapRegistry;

// The key's destructor: orphans the exiting thread's heap.
inline void heapThreadExit(void*) noexcept {
  heapRegistry.lock.lock();
  heapRegistry.orphanLocked();
  heapRegistry.lock.unlock();
  heapBinding.exited = true;
}

}  // namespace strata::detail
