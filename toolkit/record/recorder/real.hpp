// The real functions the recorder forwards to: the C library's allocator through its
// __libc_* names (never the interposed malloc), and the next definition of any other
// function (the program's Strata libraries, pthread_create, quick_exit) through
// dlsym(RTLD_NEXT), looked up once. Also STRATA_EXPORT, for the recorder's interposed C
// functions (the library is built with hidden visibility).
#pragma once
#include <dlfcn.h>
#include <stddef.h>

#include <atomic>

#include "record/recorder/core.hpp"

#define STRATA_EXPORT extern "C" __attribute__((visibility("default")))

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void __libc_free(void*);
void* __libc_memalign(size_t, size_t);
void* __libc_valloc(size_t);
void* __libc_pvalloc(size_t);
}

namespace strata::record {

// The next definition of `name`, cached in `cache`; nullptr when there is none.
template <class F>
F realSymbol(std::atomic<void*>& cache, const char* name) {
  void* f = cache.load(std::memory_order_acquire);
  if (f == nullptr) {
    Guard g;  // dlsym may allocate
    f = ::dlsym(RTLD_NEXT, name);
    cache.store(f, std::memory_order_release);
  }
  return reinterpret_cast<F>(f);
}

}  // namespace strata::record

// The next definition of the function `name` (declared), with its own cache.
#define STRATA_REAL(name)                                                          \
  ([]() {                                                                          \
    static std::atomic<void*> cache{nullptr};                                      \
    return ::strata::record::realSymbol<decltype(&::name)>(cache, #name);          \
  }())
