#include <gtest/gtest.h>

#include <cstddef>
#include <random>
#include <vector>

#include "strata/building/dllist.hpp"
#include "strata/building/sllist.hpp"

using namespace strata;

namespace {

// Sixteen 16-byte "free objects" to thread the lists through.
struct Objects {
  alignas(16) std::byte slot[16][16];
  void* operator[](std::size_t i) { return slot[i]; }
};

}  // namespace

TEST(DLList, EmptyListGivesNull) {
  DLList list;
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.get(), nullptr);
  EXPECT_TRUE(list.empty());
}

TEST(DLList, IsFirstInFirstOut) {
  Objects o;
  DLList list;
  for (std::size_t i = 0; i < 5; ++i) list.insert(o[i]);
  EXPECT_FALSE(list.empty());
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(list.get(), o[i]);
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.get(), nullptr);
}

TEST(DLList, RemovesHeadMiddleTailAndOnlyMember) {
  Objects o;
  DLList list;
  for (std::size_t i = 0; i < 5; ++i) list.insert(o[i]);
  list.remove(o[2]);  // middle
  list.remove(o[0]);  // head
  list.remove(o[4]);  // tail
  EXPECT_EQ(list.get(), o[1]);
  EXPECT_EQ(list.get(), o[3]);
  EXPECT_TRUE(list.empty());

  list.insert(o[7]);
  list.remove(o[7]);  // the only member
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.get(), nullptr);
  list.insert(o[8]);  // still usable afterwards
  EXPECT_EQ(list.get(), o[8]);
}

TEST(DLList, ClearForgetsEverything) {
  Objects o;
  DLList list;
  for (std::size_t i = 0; i < 3; ++i) list.insert(o[i]);
  list.clear();
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.get(), nullptr);
  list.insert(o[9]);
  EXPECT_EQ(list.get(), o[9]);
}

// Random inserts, gets and removes against a std::vector model of the FIFO order.
TEST(DLList, MatchesModelUnderRandomOperations) {
  Objects o;
  DLList list;
  std::vector<void*> model;
  std::vector<bool> in(16, false);
  std::mt19937 rng(7);
  for (int step = 0; step < 20000; ++step) {
    const std::size_t i = rng() % 16;
    switch (rng() % 3) {
      case 0:
        if (!in[i]) {
          list.insert(o[i]);
          model.push_back(o[i]);
          in[i] = true;
        }
        break;
      case 1: {
        void* got = list.get();
        if (model.empty()) {
          ASSERT_EQ(got, nullptr);
        } else {
          ASSERT_EQ(got, model.front());
          model.erase(model.begin());
          in[(static_cast<std::byte*>(got) - o.slot[0]) / 16] = false;
        }
        break;
      }
      default:
        if (in[i]) {
          list.remove(o[i]);
          std::erase(model, o[i]);
          in[i] = false;
        }
    }
    ASSERT_EQ(list.empty(), model.empty());
  }
}

TEST(SLList, IsLastInFirstOut) {
  Objects o;
  SLList list;
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.get(), nullptr);
  for (std::size_t i = 0; i < 5; ++i) list.insert(o[i]);
  for (std::size_t i = 5; i-- > 0;) EXPECT_EQ(list.get(), o[i]);
  EXPECT_EQ(list.get(), nullptr);
  EXPECT_TRUE(list.empty());
}

TEST(SLList, ClearForgetsEverything) {
  Objects o;
  SLList list;
  list.insert(o[0]);
  list.insert(o[1]);
  list.clear();
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.get(), nullptr);
}

static_assert(DLList::MinObjectSize == 16);
static_assert(SLList::MinObjectSize == sizeof(void*));
