#include "strata/utility/pmr_resource.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory_resource>
#include <new>
#include <set>
#include <string>
#include <vector>

#include "strata/general/kingsley_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/null_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/utility/throw_exception_heap.hpp"

#include "common/counting_heap.hpp"

using namespace strata;

namespace {

using test::CountingHeap;

using Counted = CountingHeap<KingsleyHeap<SbrkHeap<std::size_t{1} << 30>>>;

}  // namespace

static_assert(std::is_base_of_v<std::pmr::memory_resource, PmrResource<Counted>>);
static_assert(!std::is_copy_constructible_v<PmrResource<Counted>>);

TEST(PmrResource, VectorAndStringDrawFromTheHeap) {
  PmrResource<Counted> res;
  {
    std::pmr::vector<std::pmr::string> v(&res);
    for (int i = 0; i < 2000; ++i)
      v.emplace_back(std::string(40 + i % 50, static_cast<char>('a' + i % 26)));
    EXPECT_GE(res.heap().live(), 2001u) << "every long string and the vector's buffer";
    for (int i = 0; i < 2000; ++i) {
      ASSERT_EQ(v[i].size(), 40u + i % 50);
      ASSERT_EQ(v[i].front(), 'a' + i % 26);
      ASSERT_EQ(v[i].get_allocator().resource(), &res);
    }
    EXPECT_GT(res.heap().bytesHeld(), 2000u * 40);
  }
  EXPECT_EQ(res.heap().live(), 0u);
}

TEST(PmrResource, HonoursAlignmentsFrom16To4096) {
  PmrResource<Counted> res;
  Counted& h = res.heap();
  for (int round = 0; round < 3; ++round) {
    std::vector<std::pair<void*, std::size_t>> held;
    for (std::size_t align = 16; align <= 4096; align *= 2) {
      for (std::size_t n : {1u, 24u, 100u, 1000u, 5000u}) {
        void* p = res.allocate(n, align);
        ASSERT_TRUE(detail::is_aligned(p, align)) << n << " bytes at " << align;
        if (align <= Counted::Alignment)
          EXPECT_EQ(h.lastRequest, n) << "alignment the heap gives needs no padding";
        else
          EXPECT_GE(h.lastRequest, n + align) << "larger alignment over-allocates";
        std::memset(p, static_cast<int>(align & 0xff) | 1, n);
        held.emplace_back(p, n);
      }
    }
    std::size_t i = 0;
    for (std::size_t align = 16; align <= 4096; align *= 2) {
      for (std::size_t n : {1u, 24u, 100u, 1000u, 5000u}) {
        auto [p, size] = held[i++];
        std::size_t bad = 0;
        const auto* b = static_cast<const unsigned char*>(p);
        for (std::size_t k = 0; k < size; ++k)
          if (b[k] != ((align & 0xff) | 1)) bad = k + 1;
        EXPECT_EQ(bad, 0u) << "object of " << n << " at " << align << " was overwritten";
        res.deallocate(p, n, align);
      }
    }
    EXPECT_EQ(h.live(), 0u) << "every over-aligned object must free its original block";
    EXPECT_EQ(h.strays, 0u) << "the heap was given a pointer it never made";
  }
}

TEST(PmrResource, AlignedRequestsThroughPolymorphicAllocator) {
  struct alignas(256) Page {
    unsigned char b[256];
  };
  PmrResource<Counted> res;
  {
    std::pmr::vector<Page> pages(&res);
    for (int i = 0; i < 50; ++i) {
      pages.emplace_back();
      std::memset(pages.back().b, i, sizeof(Page));
      ASSERT_TRUE(detail::is_aligned(pages.data(), 256));
    }
    for (int i = 0; i < 50; ++i) ASSERT_EQ(pages[i].b[255], i);
  }
  EXPECT_EQ(res.heap().live(), 0u);
  EXPECT_EQ(res.heap().strays, 0u);
}

TEST(PmrResource, ReferencesAHeapThatLivesElsewhere) {
  Counted h;
  {
    PmrResource<Counted&> res(h);
    EXPECT_EQ(&res.heap(), &h);
    std::pmr::vector<int> v({1, 2, 3, 4}, &res);
    EXPECT_EQ(h.live(), 1u);
    EXPECT_EQ(v[3], 4);
  }
  EXPECT_EQ(h.live(), 0u);
}

TEST(PmrResource, EqualOnlyToItself) {
  PmrResource<Counted> a, b;
  Counted h;
  PmrResource<Counted&> c(h), d(h);
  EXPECT_TRUE(a.is_equal(a));
  EXPECT_FALSE(a.is_equal(b));
  EXPECT_FALSE(c.is_equal(d)) << "identity, not the heap, decides";
  EXPECT_TRUE(std::pmr::polymorphic_allocator<int>(&a) == std::pmr::polymorphic_allocator<int>(&a));
}

TEST(PmrResource, FailureThrowsBadAlloc) {
  PmrResource<NullHeap<16>> empty;
  EXPECT_THROW((void)empty.allocate(8), std::bad_alloc);
  EXPECT_THROW((void)empty.allocate(8, 64), std::bad_alloc);
  std::pmr::vector<int> v(&empty);
  EXPECT_THROW(v.push_back(1), std::bad_alloc);

  PmrResource<Counted> res;
  // Sizes no object can have, read through volatiles so that GCC does not refuse to compile
  // the call (-Walloc-size-larger-than, at -O0).
  volatile std::size_t overflowing = SIZE_MAX - 100, huge = SIZE_MAX / 2;
  EXPECT_THROW((void)res.allocate(overflowing, 4096), std::bad_alloc) << "padding would overflow";
  EXPECT_THROW((void)res.allocate(huge, 16), std::bad_alloc);
  EXPECT_EQ(res.heap().live(), 0u);

  PmrResource<ThrowExceptionHeap<NullHeap<16>>> throwing;
  EXPECT_THROW((void)throwing.allocate(8, 128), std::bad_alloc);
}

TEST(PmrResource, ZeroBytesGiveAPointer) {
  PmrResource<MallocHeap> res;
  void* p = res.allocate(0, 8);
  EXPECT_NE(p, nullptr);
  res.deallocate(p, 0, 8);
  EXPECT_EQ(res.heap().bytesHeld(), 0u);
}
