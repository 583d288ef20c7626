// Replaces the global operator new of the test program that includes it (once) with one that
// counts its calls in gNewCalls, so a test can show that a writer does not allocate.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

inline std::atomic<std::size_t> gNewCalls{0};

[[gnu::noinline]] void* operator new(std::size_t n) {
  gNewCalls.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }
