#include "strata/utility/per_class_heap.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <new>
#include <set>
#include <stdexcept>

#include "strata/general/kingsley_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/null_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/utility/throw_exception_heap.hpp"

#include "common/counting_heap.hpp"

using namespace strata;

namespace {

using test::CountingHeap;

using Counted = CountingHeap<MallocHeap>;

struct Point : PerClassHeap<Counted, Point> {
  double x = 1, y = 2;
};

struct Tracked : PerClassHeap<Counted, Tracked> {
  static inline int alive = 0;
  Tracked() { ++alive; }
  ~Tracked() { --alive; }
  int v = 7;
};

struct Throws : PerClassHeap<Counted, Throws> {
  Throws() { throw std::runtime_error("constructor failed"); }
};

struct Base : PerClassHeap<Counted, Base> {
  virtual ~Base() = default;
};
struct Derived : Base {
  char payload[200] = {};
};

struct alignas(128) Wide : PerClassHeap<Counted, Wide> {
  char bytes[100] = {};
};

struct Starved : PerClassHeap<NullHeap<16>> {
  static inline int built = 0;
  Starved() { ++built; }
};

struct SharedOne : PerClassHeap<KingsleyHeap<SbrkHeap<>>> {
  long v = 0;
};
struct SharedTwo : PerClassHeap<KingsleyHeap<SbrkHeap<>>> {
  long v = 0;
};

template <class C>
Counted& heapOf() {
  return C::classHeap();
}

}  // namespace

static_assert(sizeof(Point) == 2 * sizeof(double), "the base must add nothing to objects");

TEST(PerClassHeap, NewAndDeleteUseTheClassHeap) {
  Counted& h = heapOf<Point>();
  const std::size_t before = h.mallocs;
  Point* p = new Point;
  EXPECT_EQ(h.mallocs, before + 1);
  EXPECT_EQ(h.lastRequest, sizeof(Point));
  EXPECT_EQ(h.live(), 1u);
  EXPECT_EQ(p->y, 2);
  delete p;
  EXPECT_EQ(h.live(), 0u);
  EXPECT_EQ(h.bytesHeld(), 0u);
}

TEST(PerClassHeap, ArraysRunEveryConstructorAndDestructor) {
  Counted& h = heapOf<Tracked>();
  Tracked* a = new Tracked[10];
  EXPECT_EQ(Tracked::alive, 10);
  EXPECT_EQ(h.live(), 1u);
  EXPECT_GE(h.lastRequest, 10 * sizeof(Tracked));
  for (int i = 0; i < 10; ++i) EXPECT_EQ(a[i].v, 7);
  delete[] a;
  EXPECT_EQ(Tracked::alive, 0);
  EXPECT_EQ(h.live(), 0u);

  Point* none = new Point[0];  // still a unique, freeable pointer
  EXPECT_NE(none, nullptr);
  delete[] none;
  EXPECT_EQ(heapOf<Point>().live(), 0u);
}

TEST(PerClassHeap, SizedAndNothrowDeleteForms) {
  Counted& h = heapOf<Point>();
  void* p = Point::operator new(sizeof(Point));
  EXPECT_EQ(h.live(), 1u);
  Point::operator delete(p, sizeof(Point));
  EXPECT_EQ(h.live(), 0u);
  p = Point::operator new[](5 * sizeof(Point));
  Point::operator delete[](p, 5 * sizeof(Point));
  p = Point::operator new(sizeof(Point), std::nothrow);
  Point::operator delete(p, std::nothrow);
  EXPECT_EQ(h.live(), 0u);
  EXPECT_EQ(h.mallocs, h.frees);
}

TEST(PerClassHeap, ConstructorExceptionGivesTheMemoryBack) {
  Counted& h = heapOf<Throws>();
  const std::size_t before = h.mallocs;
  EXPECT_THROW(new Throws, std::runtime_error);
  EXPECT_THROW(new (std::nothrow) Throws, std::runtime_error);
  EXPECT_EQ(h.mallocs, before + 2);
  EXPECT_EQ(h.live(), 0u);
}

TEST(PerClassHeap, DeleteThroughBaseReachesTheSameHeap) {
  Counted& h = heapOf<Base>();
  Base* b = new Derived;
  EXPECT_EQ(h.lastRequest, sizeof(Derived));
  EXPECT_EQ(h.live(), 1u);
  delete b;
  EXPECT_EQ(h.live(), 0u);
}

TEST(PerClassHeap, OverAlignedClassesAreAligned) {
  Counted& h = heapOf<Wide>();
  std::unique_ptr<Wide> objs[8];
  for (auto& w : objs) {
    w.reset(new Wide);
    EXPECT_TRUE(detail::is_aligned(w.get(), 128));
  }
  Wide* arr = new Wide[3];
  EXPECT_TRUE(detail::is_aligned(arr, 128));
  Wide* quiet = new (std::nothrow) Wide;
  EXPECT_TRUE(detail::is_aligned(quiet, 128));
  EXPECT_EQ(h.live(), 10u);
  delete quiet;
  delete[] arr;
  for (auto& w : objs) w.reset();
  EXPECT_EQ(h.live(), 0u);
  EXPECT_EQ(h.strays, 0u) << "aligned delete must free the block new obtained";
  EXPECT_EQ(h.bytesHeld(), 0u);
}

TEST(PerClassHeap, FailureThrowsOrReturnsNull) {
  EXPECT_THROW(new Starved, std::bad_alloc);
  EXPECT_THROW(new Starved[4], std::bad_alloc);
  EXPECT_EQ(new (std::nothrow) Starved, nullptr);
  EXPECT_EQ(new (std::nothrow) Starved[4], nullptr);
  EXPECT_EQ(Starved::built, 0) << "no constructor may run on failed memory";
}

TEST(PerClassHeap, PlacementNewStillWorks) {
  alignas(Point) unsigned char buffer[sizeof(Point)];
  const std::size_t before = heapOf<Point>().mallocs;
  Point* p = new (buffer) Point;
  EXPECT_EQ(static_cast<void*>(p), buffer);
  EXPECT_EQ(p->x, 1);
  p->~Point();
  EXPECT_EQ(heapOf<Point>().mallocs, before);
}

TEST(PerClassHeap, ClassesWithoutATagShareOneInstance) {
  EXPECT_EQ(&SharedOne::classHeap(), &SharedTwo::classHeap());
  EXPECT_NE(static_cast<void*>(&heapOf<Point>()), static_cast<void*>(&heapOf<Tracked>()));
  SharedOne* a = new SharedOne;
  delete a;
  SharedTwo* b = new SharedTwo;  // same size class, same heap: the freed object comes back
  EXPECT_EQ(static_cast<void*>(b), static_cast<void*>(a));
  delete b;
}

TEST(PerClassHeap, NothrowFormsCatchAThrowingHeap) {
  struct Strict : PerClassHeap<ThrowExceptionHeap<NullHeap<16>>> {
    int v = 0;
  };
  EXPECT_THROW(new Strict, std::bad_alloc);
  EXPECT_EQ(new (std::nothrow) Strict, nullptr);
}
