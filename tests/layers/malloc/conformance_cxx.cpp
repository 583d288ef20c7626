// The C++ half of the malloc conformance test (conformance.c calls run_cxx_checks): every
// replaceable operator new and delete form, their alignment, the nothrow forms' nullptr,
// std::bad_alloc on a huge request, and the new_handler loop.
#include <malloc.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace {

int failures = 0;

void check(bool ok, const char* what, int line) {
  if (!ok) {
    std::fprintf(stderr, "FAIL conformance_cxx.cpp:%d: %s\n", line, what);
    ++failures;
  }
}
#define CHECK_CXX(cond) check((cond), #cond, __LINE__)

volatile std::size_t sink_size;
std::size_t opaque(std::size_t n) {
  sink_size = n;
  return sink_size;
}

bool aligned(const void* p, std::size_t a) {
  return (reinterpret_cast<std::uintptr_t>(p) & (a - 1)) == 0;
}

struct alignas(64) Line {
  unsigned char bytes[64];
};
struct alignas(4096) Page {
  unsigned char bytes[4096];
};

int handlerCalls = 0;
void handlerThatGivesUp() {
  ++handlerCalls;
  std::set_new_handler(nullptr);  // the next failure throws
}

void checkPlainForms() {
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{100}, std::size_t{5000},
                        std::size_t{300000}}) {
    n = opaque(n);
    void* p = ::operator new(n);
    CHECK_CXX(p != nullptr && aligned(p, 16) && malloc_usable_size(p) >= n);
    std::memset(p, 1, n);
    ::operator delete(p);
    p = ::operator new[](n);
    CHECK_CXX(p != nullptr && aligned(p, 16));
    ::operator delete[](p);
    p = ::operator new(n);
    ::operator delete(p, n);  // sized
    p = ::operator new[](n);
    ::operator delete[](p, n);
    p = ::operator new(n, std::nothrow);
    CHECK_CXX(p != nullptr);
    ::operator delete(p, std::nothrow);
    p = ::operator new[](n, std::nothrow);
    CHECK_CXX(p != nullptr);
    ::operator delete[](p, std::nothrow);
  }
  // new/delete expressions and the standard containers.
  auto* ints = new int[1000]();
  CHECK_CXX(ints[999] == 0);
  delete[] ints;
  std::vector<std::string> words;
  for (int i = 0; i < 10000; ++i) words.push_back(std::string(static_cast<std::size_t>(i % 100), 'x'));
  CHECK_CXX(words[9999].size() == 99);
  auto shared = std::make_shared<std::vector<long>>(100000, 7L);
  CHECK_CXX((*shared)[99999] == 7);
}

void checkAlignedForms() {
  for (std::size_t a : {std::size_t{32}, std::size_t{64}, std::size_t{4096},
                        std::size_t{1} << 16, std::size_t{1} << 21}) {
    const auto al = std::align_val_t(a);
    void* p = ::operator new(opaque(100), al);
    CHECK_CXX(p != nullptr && aligned(p, a));
    ::operator delete(p, al);
    p = ::operator new[](opaque(a + 1), al);
    CHECK_CXX(p != nullptr && aligned(p, a));
    ::operator delete[](p, al);
    p = ::operator new(opaque(10), al);
    ::operator delete(p, 10, al);  // sized aligned
    p = ::operator new[](opaque(10), al);
    ::operator delete[](p, 10, al);
    p = ::operator new(opaque(10), al, std::nothrow);
    CHECK_CXX(p != nullptr && aligned(p, a));
    ::operator delete(p, al, std::nothrow);
    p = ::operator new[](opaque(10), al, std::nothrow);
    CHECK_CXX(p != nullptr && aligned(p, a));
    ::operator delete[](p, al, std::nothrow);
  }
  auto* line = new Line;
  CHECK_CXX(aligned(line, 64));
  delete line;
  auto* pages = new Page[3];
  CHECK_CXX(aligned(pages, 4096));
  delete[] pages;
  std::vector<Line> lines(1000);
  CHECK_CXX(aligned(lines.data(), 64));
}

void checkFailures() {
  const std::size_t huge = opaque(SIZE_MAX - 4096);
  bool threw = false;
  try {
    void* p = ::operator new(huge);
    ::operator delete(p);
  } catch (const std::bad_alloc&) {
    threw = true;
  }
  CHECK_CXX(threw);
  threw = false;
  try {
    void* p = ::operator new[](huge, std::align_val_t(64));
    ::operator delete[](p, std::align_val_t(64));
  } catch (const std::bad_alloc&) {
    threw = true;
  }
  CHECK_CXX(threw);
  CHECK_CXX(::operator new(huge, std::nothrow) == nullptr);
  CHECK_CXX(::operator new[](huge, std::nothrow) == nullptr);
  CHECK_CXX(::operator new(huge, std::align_val_t(256), std::nothrow) == nullptr);
  CHECK_CXX(::operator new[](huge, std::align_val_t(256), std::nothrow) == nullptr);
  // The new_handler runs on failure; once it gives up, bad_alloc is thrown.
  handlerCalls = 0;
  std::set_new_handler(handlerThatGivesUp);
  threw = false;
  try {
    void* p = ::operator new(huge);
    ::operator delete(p);
  } catch (const std::bad_alloc&) {
    threw = true;
  }
  CHECK_CXX(threw && handlerCalls == 1);
  std::set_new_handler(nullptr);
}

}  // namespace

extern "C" int run_cxx_checks(void) {
  checkPlainForms();
  checkAlignedForms();
  checkFailures();
  return failures;
}
