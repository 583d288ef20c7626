// The umbrella header: <strata/strata.hpp> alone must give a program every layer, and every
// public header must compile next to every other (no clashing names, no missing includes
// hidden by include order). Each test composes a few heaps from one folder and runs a
// malloc / free round trip through each, with checks that fail if the layer misbehaves.
#include <strata/strata.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <memory_resource>
#include <new>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

using namespace strata;

namespace {

// Two objects of n bytes from h, live together: each non-null, aligned to H::Alignment, at
// least n bytes by getSize (on a sized heap), disjoint, and each keeps what was written into
// it while the other is written. Both are freed.
template <Heap H>
void roundTrip(H& h, std::size_t n) {
  SCOPED_TRACE(n);
  auto* a = static_cast<unsigned char*>(h.malloc(n));
  auto* b = static_cast<unsigned char*>(h.malloc(n));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(detail::is_aligned(a, H::Alignment));
  EXPECT_TRUE(detail::is_aligned(b, H::Alignment));
  if constexpr (SizedHeap<H>) {
    EXPECT_GE(h.getSize(a), n);
    EXPECT_GE(h.getSize(b), n);
  }
  const auto ia = reinterpret_cast<std::uintptr_t>(a), ib = reinterpret_cast<std::uintptr_t>(b);
  EXPECT_TRUE(ia + n <= ib || ib + n <= ia) << "live objects overlap";
  std::memset(a, 0x5a, n);
  std::memset(b, 0xa5, n);
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i] != 0x5a || b[i] != 0xa5) {
      ADD_FAILURE() << "byte " << i << " was overwritten";
      break;
    }
  }
  h.free(b);
  h.free(a);
}

// Builds an H, hands it to check, destroys it, and expects the top heaps to hold exactly
// what they held before: the composition gave everything back.
template <class H, class Check>
void withHeap(Check check) {
  const std::size_t before = processAccount().held();
  {
    H h;
    check(h);
  }
  EXPECT_EQ(processAccount().held(), before);
}

// Round trips at each of sizes through a fresh H, which must give everything back.
template <Heap H>
void roundTrips(std::initializer_list<std::size_t> sizes) {
  withHeap<H>([&](H& h) {
    for (std::size_t n : sizes) roundTrip(h, n);
  });
}

// A free then a malloc of the same size gets the freed object back: the layer keeps it.
template <Heap H>
void expectReuse(H& h, std::size_t n) {
  void* p = h.malloc(n);
  ASSERT_NE(p, nullptr);
  h.free(p);
  void* q = h.malloc(n);
  EXPECT_EQ(q, p) << "the freed object was not reused";
  h.free(q);
}

using Kingsley = KingsleyHeap<SbrkHeap<>>;

}  // namespace

TEST(Umbrella, TopHeaps) {
  roundTrips<MallocHeap>({1, 100, 5000});
  roundTrips<MmapHeap>({1, 100, 70000});
  roundTrips<SbrkHeap<>>({1, 100, 5000});
  roundTrips<StaticBufferHeap<4096>>({16, 1000});
  withHeap<StaticBufferHeap<256>>([](auto& h) {
    EXPECT_NE(h.malloc(200), nullptr);
    EXPECT_EQ(h.malloc(200), nullptr) << "the buffer is used up";
    h.clear();
    EXPECT_NE(h.malloc(200), nullptr) << "clear() starts over";
  });
  NullHeap<16> none;
  EXPECT_EQ(none.malloc(16), nullptr);
  none.free(nullptr);
}

TEST(Umbrella, Representation) {
  roundTrips<SizeHeap<MallocHeap>>({1, 17, 4000});
  roundTrips<CoalesceableHeap<SbrkHeap<>>>({1, 17, 4000});
  withHeap<SizeHeap<SbrkHeap<>>>([](auto& h) {
    void* p = h.malloc(17);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(h.getSize(p), 32u) << "sizes are rounded up to 16";
    h.free(p);
  });
}

TEST(Umbrella, BuildingBlocks) {
  roundTrips<FreelistHeap<SizeHeap<MallocHeap>>>({64});
  withHeap<FreelistHeap<SizeHeap<MallocHeap>>>([](auto& h) { expectReuse(h, 64); });
  withHeap<BoundedFreelistHeap<2, SizeHeap<MallocHeap>>>([](auto& h) {
    expectReuse(h, 48);
    EXPECT_EQ(h.cached(), 1u) << "the last free is cached";
  });
  withHeap<FreelistHeap<ChunkHeap<4096, MallocHeap>>>([](auto& h) {
    roundTrip(h, 32);
    expectReuse(h, 32);
    EXPECT_EQ(h.chunks(), 1u) << "small objects are carved from one chunk";
  });
  withHeap<DLListHeap<SizeHeap<MallocHeap>>>([](auto& h) { expectReuse(h, 32); });
  withHeap<SLListHeap<SizeHeap<MallocHeap>>>([](auto& h) { expectReuse(h, 32); });

  using Coalescing =
      CoalesceHeap<SegHeap<64, LeaClasses, DLListHeap, CoalesceableHeap<SbrkHeap<>>>>;
  roundTrips<Coalescing>({1, 100, 3000});
  withHeap<Coalescing>([](auto& h) {
    void* a = h.malloc(100);
    void* b = h.malloc(100);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    h.free(a);
    h.free(b);
    void* c = h.malloc(200);
    EXPECT_EQ(c, a) << "two adjacent freed objects should merge and serve a request for both";
    h.free(c);
  });
}

TEST(Umbrella, Combining) {
  using Strict = StrictSegHeap<8, PowerOfTwoClasses<4>, FreelistHeap, SizeHeap<SbrkHeap<>>>;
  roundTrips<Strict>({1, 20, 1000});
  withHeap<Strict>([](auto& h) {
    void* p = h.malloc(20);
    h.free(p);
    EXPECT_EQ(h.malloc(30), p) << "20 and 30 bytes share the 32-byte class";
  });

  using Seg = SegHeap<32, LinearClasses<16>, DLListHeap, SizeHeap<MallocHeap>>;
  roundTrips<Seg>({1, 100, 1000});
  withHeap<Seg>([](auto& h) {
    void* p = h.malloc(100);
    h.free(p);
    void* q = h.malloc(40);
    EXPECT_EQ(q, p) << "an empty bin should be served from a larger one";
    h.free(q);
  });

  using Select = SelectMmapHeap<4096, Kingsley, MmapHeap>;
  roundTrips<Select>({100, 10000});
  withHeap<Select>([](auto& h) {
    void* small = h.malloc(100);
    void* big = h.malloc(10000);
    EXPECT_FALSE(MmapHeap::isMapped(small));
    EXPECT_TRUE(MmapHeap::isMapped(big));
    h.free(small);
    h.free(big);
  });

  using Hybrid = HybridHeap<1024, Kingsley, SizeHeap<MmapHeap>>;
  roundTrips<Hybrid>({1, 1024, 1025, 50000});

  using Threshold = ThresholdHeap<LeaMediumHeap<SbrkHeap<>>>;
  roundTrips<Threshold>({8, 64, 1000});
  withHeap<Threshold>([](auto& h) { expectReuse(h, 24); });
}

TEST(Umbrella, GeneralPurpose) {
  roundTrips<Kingsley>({1, 100, 70000});
  withHeap<Kingsley>([](auto& h) {
    void* p = h.malloc(100);
    EXPECT_EQ(h.getSize(p), 128u) << "Kingsley rounds to powers of two";
    h.free(p);
  });
  roundTrips<KingsleyCoalesceHeap<>>({1, 100, 70000});
  roundTrips<LeaHeap<>>({1, 100, 5000, 200000});
  withHeap<LeaHeap<>>([](auto& h) {
    void* big = h.malloc(kLeaMmapThreshold);
    EXPECT_TRUE(MmapHeap::isMapped(big)) << "requests of 128 KiB or more get their own mapping";
    h.free(big);
  });
}

TEST(Umbrella, Utilities) {
  withHeap<ANSIWrapper<Kingsley>>([](auto& h) {
    void* z = h.malloc(0);
    EXPECT_NE(z, nullptr) << "malloc(0) gives a unique pointer";
    h.free(z);
    auto* p = static_cast<unsigned char*>(h.calloc(10, 10));
    ASSERT_NE(p, nullptr);
    for (int i = 0; i < 100; ++i) ASSERT_EQ(p[i], 0) << i;
    std::memset(p, 7, 100);
    p = static_cast<unsigned char*>(h.realloc(p, 1000));
    ASSERT_NE(p, nullptr);
    for (int i = 0; i < 100; ++i) ASSERT_EQ(p[i], 7) << "realloc keeps the contents";
    h.free(p);
  });

  withHeap<DebugHeap<Kingsley>>([](auto& h) {
    roundTrip(h, 100);
    EXPECT_EQ(h.liveObjects(), 0u);
    EXPECT_EQ(h.check(), 0u);
    EXPECT_EQ(h.errorsReported(), 0u);
  });

  roundTrips<LockedHeap<SpinLock, Kingsley>>({1, 100, 5000});
  roundTrips<ThrowExceptionHeap<MallocHeap>>({1, 100});
  ThrowExceptionHeap<NullHeap<16>> empty;
  EXPECT_THROW(empty.malloc(16), std::bad_alloc);

  withHeap<ProfileHeap<MallocHeap>>([](auto& h) {
    roundTrip(h, 100);
    const ProfileStats s = h.stats();
    EXPECT_EQ(s.mallocs, 2u);
    EXPECT_EQ(s.frees, 2u);
    EXPECT_EQ(s.liveBytes, 0u);
    EXPECT_EQ(s.peakLiveBytes, 200u);
  });

  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  {
    TraceHeap<MallocHeap> h(out);
    roundTrip(h, 100);
    EXPECT_EQ(h.mallocsTraced(), 2u);
    h.flush();
    EXPECT_TRUE(h.ok());
  }
  std::rewind(out);
  char line[128] = {};
  ASSERT_NE(std::fgets(line, sizeof line, out), nullptr);
  EXPECT_EQ(std::string(line).rfind("m 0 100 0x", 0), 0u) << line;
  std::fclose(out);

  struct Tag;
  UniqueHeap<SizeHeap<MallocHeap>, Tag> one, other;
  void* shared = one.malloc(40);
  ASSERT_NE(shared, nullptr);
  EXPECT_GE(other.getSize(shared), 40u) << "every handle reaches the same instance";
  other.free(shared);
  roundTrip(one, 40);

  withHeap<PmrResource<Kingsley>>([](auto& resource) {
    std::pmr::vector<int> v(&resource);
    for (int i = 0; i < 1000; ++i) v.push_back(i);
    EXPECT_EQ(v[999], 999);
    EXPECT_GT(resource.heap().bytesHeld(), 0u);
    void* wide = resource.allocate(100, 256);
    EXPECT_TRUE(detail::is_aligned(wide, 256));
    resource.deallocate(wide, 100, 256);
  });

  withHeap<Kingsley>([](auto& heap) {
    std::vector<int, StlAllocator<int, Kingsley>> v(heap);
    for (int i = 0; i < 1000; ++i) v.push_back(i);
    EXPECT_EQ(v[999], 999);
    EXPECT_GT(heap.bytesHeld(), 0u);
  });
}

namespace {

// A class whose objects live in their own freelist heap.
struct Node : PerClassHeap<FreelistHeap<SizeHeap<MallocHeap>>, Node> {
  int value = 0;
};

}  // namespace

TEST(Umbrella, PerClassHeap) {
  auto* a = new Node;
  a->value = 42;
  EXPECT_EQ(a->value, 42);
  const auto first = reinterpret_cast<std::uintptr_t>(a);
  delete a;
  auto* b = new Node;
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b), first) << "the class's heap reuses the object";
  delete b;
}

TEST(Umbrella, Threads) {
  withHeap<ThreadHeap<2, Kingsley>>([](auto& h) {
    roundTrip(h, 100);
    void* p = h.malloc(100);
    ASSERT_NE(p, nullptr);
    std::thread([&] { h.free(p); }).join();
  });
  withHeap<PHOThreadHeap<2, Kingsley>>([](auto& h) {
    using H = std::remove_reference_t<decltype(h)>;
    roundTrip(h, 100);
    void* p = h.malloc(100);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(H::ownerOf(p), H::currentHeap());
    std::thread([&] { h.free(p); }).join();
  });
}
