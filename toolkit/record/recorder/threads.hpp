// The recorder's view of thread lifetimes: pthread_create is interposed so that every thread
// the program creates runs through a small wrapper that tells the recorder when the thread
// starts (before its start routine, naming the creating thread) and when it ends (after its
// thread_local destructors and its pthread key destructors, which may free memory). The
// recorder turns those into ThreadStart and ThreadEnd events.
#pragma once
#include <pthread.h>

#include <cstdint>

namespace strata::record {

// What the recorder does at a wrapped thread's start and end; both run on that thread.
struct ThreadHooks {
  // Before the thread's start routine; creator = the creating thread's index.
  void (*started)(std::uint32_t creator);
  // At the thread's end: in the last round of pthread key destructors, after every
  // thread_local destructor and after the key destructors of the earlier rounds.
  void (*ended)();
};

// Sets up the hooks and the key whose destructor finds the thread's end. False when no key
// could be made; threads are then not wrapped.
bool initThreadHooks(ThreadHooks hooks) noexcept;

using PthreadCreate = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);

// pthread_create through `real`, the new thread wrapped (its start and end reported to the
// hooks, creator as given) when the hooks are set up and the wrapper's argument block could be
// allocated (with the C library's own malloc: the recorder does not record it); otherwise the
// plain call.
int createThread(PthreadCreate real, pthread_t* thread, const pthread_attr_t* attr,
                 void* (*start)(void*), void* arg, std::uint32_t creator) noexcept;

}  // namespace strata::record
