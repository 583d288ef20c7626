#include <gtest/gtest.h>

#include "strata/building/adapt_heap.hpp"
#include "strata/building/freelist_heap.hpp"
#include "strata/representation/size_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/null_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "common/differential.hpp"

using namespace strata;

using DLHeap = DLListHeap<SizeHeap<MallocHeap>>;
using SLHeap = SLListHeap<SizeHeap<MallocHeap>>;

static_assert(SizedHeap<DLHeap> && DLHeap::Alignment == 16);
static_assert(FreeDictionary<DLList> && FreeDictionary<SLList>);
static_assert(!FreeDictionary<int>);
// remove(p) and empty() appear exactly when the dictionary has them.
template <class H>
concept CanRemove = requires(H& h, void* p) { h.remove(p); };
template <class H>
concept CanTellEmpty = requires(const H& h) { h.empty(); };
static_assert(CanRemove<DLHeap> && !CanRemove<SLHeap>);
static_assert(CanTellEmpty<DLHeap> && CanTellEmpty<SLHeap>);
static_assert(!CanRemove<FreelistHeap<NullHeap<16>>>);
// A bin of a segregated heap: an AdaptHeap over NullHeap is a Heap.
static_assert(Heap<DLListHeap<NullHeap<16>>>);
static_assert(ClearableHeap<DLListHeap<SbrkHeap<>>>);
static_assert(!ClearableHeap<DLListHeap<NullHeap<16>>>);

TEST(AdaptHeap, DLListReusesOldestFirst) {
  DLHeap h;
  void* a = h.malloc(32);
  void* b = h.malloc(32);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  h.free(a);
  h.free(b);
  EXPECT_EQ(h.malloc(32), a);
  EXPECT_EQ(h.malloc(32), b);
  h.free(a);
  h.free(b);
}

TEST(AdaptHeap, SLListReusesNewestFirst) {
  SLHeap h;
  void* a = h.malloc(32);
  void* b = h.malloc(32);
  h.free(a);
  h.free(b);
  EXPECT_EQ(h.malloc(32), b);
  EXPECT_EQ(h.malloc(32), a);
  h.free(a);
  h.free(b);
}

TEST(AdaptHeap, AsksParentOnlyWhenEmptyAndForEnoughForLinks) {
  DLHeap h;
  void* a = h.malloc(1);
  EXPECT_GE(h.getSize(a), DLList::MinObjectSize);
  const std::size_t held = h.bytesHeld();
  h.free(a);
  EXPECT_EQ(h.malloc(1), a);
  EXPECT_EQ(h.bytesHeld(), held);  // served from the dictionary
  void* b = h.malloc(1);           // dictionary empty: the parent pays
  EXPECT_NE(b, a);
  EXPECT_GT(h.bytesHeld(), held);
  h.free(a);
  h.free(b);
}

TEST(AdaptHeap, RemoveTakesAStoredObjectOut) {
  DLHeap h;
  void* a = h.malloc(32);
  void* b = h.malloc(32);
  void* c = h.malloc(32);
  h.free(a);
  h.free(b);
  h.free(c);
  h.remove(b);
  EXPECT_EQ(h.malloc(32), a);
  EXPECT_EQ(h.malloc(32), c);
  EXPECT_TRUE(h.empty());
  h.free(a);
  h.free(b);
  h.free(c);
}

TEST(AdaptHeap, FreeNullDoesNothing) {
  DLHeap h;
  h.free(nullptr);
  EXPECT_TRUE(h.empty());
}

TEST(AdaptHeap, DestructorGivesEverythingBack) {
  const std::size_t before = processAccount().held();
  {
    DLHeap h;
    void* p[100];
    for (auto& q : p) q = h.malloc(48);
    for (auto& q : p) h.free(q);
    EXPECT_GT(h.bytesHeld(), 0u);
  }
  EXPECT_EQ(processAccount().held(), before);
}

TEST(AdaptHeap, ClearForgetsObjectsAndClearsParent) {
  DLListHeap<SbrkHeap<>> h;
  void* a = h.malloc(64);
  h.free(a);
  h.clear();
  EXPECT_EQ(h.bytesHeld(), 0u);
  EXPECT_TRUE(h.empty());
}

// AdaptHeap serves one size: every request is 128 bytes here.
TEST(AdaptHeap, DifferentialOneSizeDLList) {
  test::expectEverythingReturned<DLHeap>(
      {.seed = 31, .ops = 300'000, .sizes = test::SizeMix::Small, .minRequest = 128});
}

TEST(AdaptHeap, DifferentialOneSizeSLList) {
  test::expectEverythingReturned<SLHeap>(
      {.seed = 32, .ops = 300'000, .sizes = test::SizeMix::Small, .minRequest = 128});
}
