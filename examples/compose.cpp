// The composition example of the README, built and run by the tests.
#include <cstdio>
#include <cstring>

#include <strata/strata.hpp>

// A power-of-two segregated-fits heap (Kingsley), thread-safe, with C malloc semantics,
// drawing its memory from an sbrk-style range of address space.
using MyHeap = strata::ANSIWrapper<
    strata::LockedHeap<strata::SpinLock, strata::KingsleyHeap<strata::SbrkHeap<>>>>;

// Kingsley is fast but wasteful; the Lea-style heap splits and coalesces.
using Frugal = strata::ANSIWrapper<strata::LeaHeap<>>;

// Your own layer: a template over its parent. This one counts large requests.
template <strata::Heap Super>
class CountLargeHeap : public Super {
 public:
  static constexpr std::size_t Alignment = Super::Alignment;
  using Super::Super;
  void* malloc(std::size_t n) noexcept {
    if (n >= 4096) ++large;
    return Super::malloc(n);
  }
  std::size_t large = 0;
};
using Counted = strata::ANSIWrapper<CountLargeHeap<strata::LeaHeap<>>>;

int main() {
  MyHeap heap;
  char* p = static_cast<char*>(heap.malloc(100));  // the 128-byte class
  std::strcpy(p, "hello");
  p = static_cast<char*>(heap.realloc(p, 120));    // still fits: stays in place
  std::printf("%s: %zu usable bytes, %zu held from the system\n", p, heap.getSize(p),
              heap.bytesHeld());
  heap.free(p);

  Counted counted;
  counted.free(counted.malloc(10000));
  counted.free(counted.malloc(10));
  std::printf("large requests: %zu\n", counted.large);

  Frugal frugal;
  void* q = frugal.calloc(10, 10);
  frugal.free(q);
  return counted.large == 1 ? 0 : 1;
}
