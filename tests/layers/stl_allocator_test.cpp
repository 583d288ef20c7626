#include "strata/utility/stl_allocator.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "strata/general/kingsley_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/null_heap.hpp"
#include "strata/top/sbrk_heap.hpp"

using namespace strata;

namespace {

// Counts what reaches the heap: objects made, objects freed, bytes requested and still live.
template <Heap Super>
class CountingHeap : public Super {
 public:
  static constexpr std::size_t Alignment = Super::Alignment;
  void* malloc(std::size_t n) noexcept {
    void* p = Super::malloc(n);
    if (p != nullptr) {
      ++mallocs;
      liveBytes += Super::getSize(p);
    }
    return p;
  }
  void free(void* p) noexcept {
    if (p == nullptr) return;
    ++frees;
    liveBytes -= Super::getSize(p);
    Super::free(p);
  }
  std::size_t live() const { return mallocs - frees; }
  std::size_t mallocs = 0, frees = 0, liveBytes = 0;
};

using Counted = CountingHeap<KingsleyHeap<SbrkHeap<std::size_t{1} << 30>>>;
template <class T>
using Alloc = StlAllocator<T, Counted>;

struct alignas(64) Wide {
  char b[64];
};

// A type holding a container of itself: the allocator must accept incomplete types.
struct Tree {
  Tree(int v, const Alloc<Tree>& a) : value(v), kids(a) {}
  int value;
  std::vector<Tree, Alloc<Tree>> kids;
};

template <class T, class H>
concept Allocates = requires(StlAllocator<T, H>& a) { a.allocate(1); };

}  // namespace

static_assert(Allocates<int, Counted> && Allocates<std::max_align_t, MallocHeap>);
// An over-aligned type is refused when allocate is instantiated (a static assertion, so that
// self-referential types work under every compiler): compile_fail/stl_allocator_over_aligned_type.
static_assert(!HeapAlignsFor<Wide, Counted> && HeapAlignsFor<Wide, NullHeap<64>>);
static_assert(Allocates<Wide, NullHeap<64>>);
static_assert(
    std::is_same_v<std::allocator_traits<Alloc<int>>::rebind_alloc<double>, Alloc<double>>);
static_assert(std::allocator_traits<Alloc<int>>::propagate_on_container_move_assignment::value);
static_assert(!std::allocator_traits<Alloc<int>>::is_always_equal::value);

TEST(StlAllocator, VectorContentsAndAccounting) {
  Counted h;
  {
    std::vector<std::uint64_t, Alloc<std::uint64_t>> v(h);
    for (std::uint64_t i = 0; i < 100000; ++i) v.push_back(i * i);
    for (std::uint64_t i = 0; i < 100000; ++i) ASSERT_EQ(v[i], i * i);
    EXPECT_EQ(h.live(), 1u);
    EXPECT_GE(h.liveBytes, 100000 * sizeof(std::uint64_t));
    EXPECT_GE(h.bytesHeld(), h.liveBytes);
    EXPECT_GT(h.mallocs, 10u) << "growth should have reallocated through the heap";
  }
  EXPECT_EQ(h.live(), 0u);
  EXPECT_EQ(h.liveBytes, 0u);
}

TEST(StlAllocator, MapListAndUnorderedMap) {
  Counted h;
  {
    std::map<int, std::string, std::less<>, Alloc<std::pair<const int, std::string>>> m(h);
    std::list<int, Alloc<int>> l(h);
    std::unordered_map<int, int, std::hash<int>, std::equal_to<>, Alloc<std::pair<const int, int>>>
        u(h);
    for (int i = 0; i < 5000; ++i) {
      m.emplace(i, std::to_string(i));
      l.push_front(i);
      u[i] = 3 * i;
    }
    EXPECT_GE(h.live(), 3 * 5000u);
    for (int i = 0; i < 5000; ++i) {
      ASSERT_EQ(m.at(i), std::to_string(i));
      ASSERT_EQ(u.at(i), 3 * i);
    }
    int expect = 4999;
    for (int x : l) ASSERT_EQ(x, expect--);
    for (int i = 0; i < 5000; i += 2) {
      m.erase(i);
      u.erase(i);
    }
    l.remove_if([](int x) { return x % 2 == 0; });
    EXPECT_EQ(m.size(), 2500u);
    EXPECT_EQ(u.size(), 2500u);
    EXPECT_EQ(l.size(), 2500u);
    EXPECT_EQ(m.at(4999), "4999");
  }
  EXPECT_EQ(h.live(), 0u);
  EXPECT_EQ(h.liveBytes, 0u);
}

TEST(StlAllocator, SelfReferentialTypes) {
  Counted h;
  {
    Tree root(1, h);
    for (int i = 0; i < 10; ++i) root.kids.emplace_back(i, h);
    root.kids[3].kids.emplace_back(42, h);
    EXPECT_EQ(root.kids[3].kids[0].value, 42);
    EXPECT_GE(h.live(), 2u);
  }
  EXPECT_EQ(h.live(), 0u);
}

TEST(StlAllocator, EqualityFollowsTheHeap) {
  Counted h1, h2;
  Alloc<int> a(h1), b(h1), c(h2);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  Alloc<double> rebound(a);
  EXPECT_EQ(rebound, a);
  EXPECT_EQ(&rebound.heap(), &h1);
  // Default-constructed allocators all use the shared UniqueHeap instance.
  EXPECT_EQ(Alloc<int>(), Alloc<char>());
  EXPECT_EQ(&Alloc<int>().heap(), &UniqueHeap<Counted>::instance());
}

TEST(StlAllocator, AllocatorsPropagateWithTheirMemory) {
  Counted h1, h2;
  using Vec = std::vector<int, Alloc<int>>;
  Vec a({1, 2, 3}, Alloc<int>(h1));
  Vec b({4, 5}, Alloc<int>(h2));
  b = a;  // copy assignment: b now allocates from h1
  EXPECT_EQ(&b.get_allocator().heap(), &h1);
  EXPECT_EQ(h2.live(), 0u);
  Vec c({7}, Alloc<int>(h2));
  const int* data = c.data();
  a = std::move(c);  // move assignment: the buffer moves, no copy
  EXPECT_EQ(a.data(), data);
  EXPECT_EQ(&a.get_allocator().heap(), &h2);
  Vec d({8, 9}, Alloc<int>(h1));
  a.swap(d);
  EXPECT_EQ(&a.get_allocator().heap(), &h1);
  EXPECT_EQ(&d.get_allocator().heap(), &h2);
  EXPECT_EQ(d[0], 7);
}

TEST(StlAllocator, FailureAndOverflowThrow) {
  Counted h;
  Alloc<std::uint64_t> a(h);
  EXPECT_THROW((void)a.allocate(SIZE_MAX / 4), std::bad_alloc);  // n * 8 overflows
  EXPECT_THROW((void)a.allocate(SIZE_MAX / 8), std::bad_alloc);  // fits, but the heap fails
  EXPECT_EQ(h.live(), 0u);
  NullHeap<16> none;
  StlAllocator<int, NullHeap<16>> empty(none);
  EXPECT_THROW((void)empty.allocate(1), std::bad_alloc);
  std::vector<int, StlAllocator<int, NullHeap<16>>> v(empty);
  EXPECT_THROW(v.push_back(1), std::bad_alloc);
}

TEST(StlAllocator, ZeroElementsStillGiveAPointer) {
  Counted h;
  Alloc<int> a(h);
  int* p = a.allocate(0);
  EXPECT_NE(p, nullptr);
  a.deallocate(p, 0);
  EXPECT_EQ(h.live(), 0u);
}
