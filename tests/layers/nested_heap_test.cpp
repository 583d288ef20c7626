#include "strata/reap/nested_heap.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "strata/reap/region_heap.hpp"
#include "strata/top/malloc_heap.hpp"

using namespace strata;

// A region that notes when it is cleared and destroyed, to watch the tree.
class Noting : public RegionHeap<MallocHeap> {
 public:
  static inline std::vector<int>* log = nullptr;
  int id = 0;
  ~Noting() {
    if (log) log->push_back(-id);
  }
  void clear() noexcept {
    if (log) log->push_back(id);
    RegionHeap<MallocHeap>::clear();
  }
};

using Tree = NestedHeap<Noting>;
static_assert(ClearableHeap<Tree>);

TEST(NestedHeap, ChildrenGoWithTheirParent) {
  std::vector<int> log;
  Noting::log = &log;
  const std::size_t before = processAccount().held();
  {
    Tree root;
    root.id = 1;
    Tree* a = root.createChild();
    Tree* b = root.createChild();
    ASSERT_TRUE(a && b);
    a->id = 2;
    b->id = 3;
    Tree* c = a->createChild();
    c->id = 4;
    EXPECT_EQ(c->parent(), a);
    EXPECT_EQ(root.firstChild(), b);
    EXPECT_EQ(b->nextSibling(), a);
    for (Tree* t : {a, b, c}) ASSERT_NE(t->malloc(500), nullptr);
    root.clear();  // destroys b, then a (with c), then clears root's memory
    EXPECT_EQ(root.firstChild(), nullptr);
    // Destroying a heap clears its region (RegionHeap's destructor) after ~Noting.
    EXPECT_EQ(log.back(), 1);
    EXPECT_EQ(log[0], -3);
    EXPECT_EQ(log[1], -4);
    EXPECT_EQ(log[2], -2);
    Tree* d = root.createChild();
    d->id = 5;
    d->createChild()->id = 6;
    log.clear();
  }
  EXPECT_EQ(log, (std::vector<int>{-6, -5, -1}));
  EXPECT_EQ(processAccount().held(), before);
  Noting::log = nullptr;
}

TEST(NestedHeap, DestroyChildUnlinksIt) {
  Tree root;
  Tree* a = root.createChild();
  Tree* b = root.createChild();
  Tree* c = root.createChild();
  root.destroyChild(b);
  EXPECT_EQ(root.firstChild(), c);
  EXPECT_EQ(c->nextSibling(), a);
  root.destroyChild(c);
  EXPECT_EQ(root.firstChild(), a);
  EXPECT_EQ(a->nextSibling(), nullptr);
  root.destroyChild(a);
  EXPECT_EQ(root.firstChild(), nullptr);
}

TEST(NestedHeap, DestroyedChildStorageIsReused) {
  const std::size_t before = processAccount().held();
  {
    Tree root;
    Tree* a = root.createChild();
    ASSERT_NE(a->malloc(100), nullptr);
    root.destroyChild(a);
    Tree* b = root.createChild();
    EXPECT_EQ(b, a);
    EXPECT_EQ(b->id, 0);
    EXPECT_EQ(b->parent(), &root);
    EXPECT_EQ(b->firstChild(), nullptr);
    Tree* c = root.createChild();
    EXPECT_NE(c, b);
    root.destroyChild(b);
    root.destroyChild(c);
    root.clear();  // the spares go with root's memory
    Tree* d = root.createChild();
    ASSERT_NE(d, nullptr);
    EXPECT_NE(d->malloc(10), nullptr);
  }
  EXPECT_EQ(processAccount().held(), before);
}
