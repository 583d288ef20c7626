// Built with -fno-exceptions (as the malloc libraries are, and as many users build): every
// public header compiles, and the layers that catch or throw when exceptions exist keep their
// contracts without them. Exits non-zero, saying which check failed, when one does not hold.
#include <cstdint>
#include <cstdio>
#include <new>

#include "strata/strata.hpp"

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "no_exceptions_check: %s\n", what);
    ++failures;
  }
}

using Plain = strata::SizeHeap<strata::MallocHeap>;

struct Node : strata::PerClassHeap<Plain> {
  int value = 7;
};
struct alignas(64) Wide : strata::PerClassHeap<Plain> {
  int value = 9;
};
// A class whose heap has nothing to give: the nothrow forms must answer nullptr.
struct Starved : strata::PerClassHeap<strata::NullHeap<>> {
  int value = 0;
};

struct Counted {
  static inline int alive = 0;
  Counted() { ++alive; }
  ~Counted() { --alive; }
};

}  // namespace

int main() {
  Node* n = new (std::nothrow) Node;
  check(n != nullptr && n->value == 7, "nothrow new of a PerClassHeap class");
  delete n;
  n = new Node;
  check(n->value == 7, "new of a PerClassHeap class");
  delete n;
  Wide* w = new Wide[3];
  check(reinterpret_cast<std::uintptr_t>(w) % 64 == 0 && w[2].value == 9,
        "aligned array new of a PerClassHeap class");
  delete[] w;
  check(new (std::nothrow) Starved == nullptr, "nothrow new over an empty heap is nullptr");
  check(new (std::nothrow) Starved[4] == nullptr, "nothrow array new over an empty heap is nullptr");

  {
    strata::Reap<> reap;
    Counted* c = reap.make<Counted>();
    check(c != nullptr && Counted::alive == 1, "Reap::make constructs");
    reap.clear();
    check(Counted::alive == 0, "Reap::clear runs the destructor");
  }
  if (failures == 0) std::puts("no_exceptions_check: all checks hold");
  return failures == 0 ? 0 : 1;
}
