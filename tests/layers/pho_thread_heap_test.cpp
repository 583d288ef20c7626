#include "strata/threads/pho_thread_heap.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <set>
#include <vector>

#include "strata/general/kingsley_heap.hpp"
#include "strata/threads/thread_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "strata/top/mmap_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/utility/ansi_wrapper.hpp"
#include "common/differential.hpp"
#include "common/thread_stress.hpp"

using namespace strata;

using Top = SbrkHeap<std::size_t{1} << 32>;
using Owned = PHOThreadHeap<4, KingsleyHeap<Top>>;
using Unowned = ThreadHeap<4, KingsleyHeap<Top>>;

static_assert(SizedHeap<Owned> && ClearableHeap<Owned> && AccountedHeap<Owned>);
static_assert(Owned::Alignment == 16 && Owned::HeaderSize == 16);
static_assert(SizedHeap<PHOThreadHeap<2, Top>>);  // the header gives sizes even over a bare top
static_assert(!std::is_copy_constructible_v<Owned>);

TEST(PHOThreadHeap, HeaderRecordsOwnerAndSize) {
  Owned h;
  for (std::size_t n : {0u, 1u, 15u, 16u, 17u, 100u, 4096u, 100000u}) {
    void* p = h.malloc(n);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(detail::is_aligned(p, 16));
    EXPECT_EQ(h.getSize(p), detail::align_up(n, 16)) << n;
    EXPECT_EQ(Owned::ownerOf(p), Owned::currentHeap());
    EXPECT_FALSE(MmapHeap::isMapped(p)) << "the shared header word must carry no flags";
    std::memset(p, 0xab, n);
    h.free(p);
  }
  h.free(nullptr);
  EXPECT_EQ(h.getSize(nullptr), 0u);
}

TEST(PHOThreadHeap, HugeRequestsAreNull) {
  Owned h;
  for (std::size_t n :
       {SIZE_MAX, SIZE_MAX - 15, SIZE_MAX - 16, SIZE_MAX - 31, std::size_t{1} << 50}) {
    errno = 0;
    EXPECT_EQ(h.malloc(n), nullptr) << n;
    EXPECT_EQ(errno, ENOMEM) << n;
  }
}

TEST(PHOThreadHeap, CrossThreadFreeReturnsToTheOwner) {
  Owned h;
  test::Runner a, b;
  std::size_t heapA = 0, heapB = 0;
  a.run([&] { heapA = Owned::currentHeap(); });
  b.run([&] { heapB = Owned::currentHeap(); });
  ASSERT_NE(heapA, heapB);

  void* p = nullptr;
  void* fromA = nullptr;
  void* fromB = nullptr;
  a.run([&] { p = h.malloc(64); });
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(Owned::ownerOf(p), heapA);
  b.run([&] { h.free(p); });             // goes back to A's heap
  b.run([&] { fromB = h.malloc(64); });  // B's heap has nothing cached
  a.run([&] { fromA = h.malloc(64); });  // A gets its object back
  EXPECT_EQ(fromA, p);
  EXPECT_NE(fromB, p);
  EXPECT_EQ(Owned::ownerOf(fromB), heapB);
  b.run([&] { h.free(fromA); });
  a.run([&] { h.free(fromB); });
}

namespace {

struct RoundTrip {
  std::size_t heldAfterFirstRound = 0, heldAtEnd = 0;
  std::size_t reused = 0, later = 0;  // later-round objects, and how many were round-1 objects
};

// A producer thread allocates a batch and hands it to a consumer thread that checks and frees
// it, round after round: the pattern that makes a heap without ownership grow without bound.
template <class H>
RoundTrip producerConsumer(H& h, int rounds, int perRound, std::size_t size) {
  test::Runner producer, consumer;
  std::size_t pHeap = 0, cHeap = 1;
  producer.run([&] { pHeap = H::currentHeap(); });
  consumer.run([&] { cHeap = H::currentHeap(); });
  EXPECT_NE(pHeap, cHeap);
  RoundTrip out;
  std::set<void*> first;
  std::size_t errors = 0;
  for (int r = 0; r < rounds; ++r) {
    std::vector<void*> batch;
    producer.run([&] {
      for (int i = 0; i < perRound; ++i) {
        void* p = h.malloc(size);
        if (p != nullptr) std::memset(p, r + 1, size);
        batch.push_back(p);
      }
    });
    consumer.run([&] {
      std::size_t bad = 0;
      for (void* p : batch) {
        if (p == nullptr || !test::checkTag(p, size, static_cast<unsigned char>(r + 1), bad))
          ++errors;
        h.free(p);
      }
    });
    if (r == 0) {
      first.insert(batch.begin(), batch.end());
      out.heldAfterFirstRound = h.bytesHeld();
    } else {
      for (void* p : batch) out.reused += first.count(p);
      out.later += batch.size();
    }
  }
  EXPECT_EQ(errors, 0u);
  out.heldAtEnd = h.bytesHeld();
  return out;
}

}  // namespace

TEST(PHOThreadHeap, OwnerReusesCrossThreadFreesButThreadHeapDoesNot) {
  constexpr int kRounds = 20;
  const std::size_t before = processAccount().held();
  {
    Owned pho;
    const RoundTrip owned = producerConsumer(pho, kRounds, 1000, 100);
    EXPECT_EQ(owned.reused, owned.later) << "the producer should get its freed objects back";
    EXPECT_EQ(owned.heldAtEnd, owned.heldAfterFirstRound) << "memory must stay bounded";

    Unowned th;
    const RoundTrip unowned = producerConsumer(th, kRounds, 1000, 100);
    EXPECT_EQ(unowned.reused, 0u) << "without ownership, frees stay in the consumer's heap";
    EXPECT_GE(unowned.heldAtEnd, (kRounds - 1) * unowned.heldAfterFirstRound)
        << "without ownership the producer's heap should grow every round";
    EXPECT_GT(unowned.heldAtEnd, 10 * owned.heldAtEnd);
  }
  EXPECT_EQ(processAccount().held(), before);
}

TEST(PHOThreadHeap, ClearEmptiesEveryHeap) {
  Owned h;
  test::Runner a, b;
  a.run([&] { ASSERT_NE(h.malloc(100), nullptr); });
  b.run([&] { ASSERT_NE(h.malloc(3000), nullptr); });
  EXPECT_GT(h.bytesHeld(), 0u);
  EXPECT_GE(h.peakBytesHeld(), h.bytesHeld());
  h.clear();
  EXPECT_EQ(h.bytesHeld(), 0u);
  a.run([&] { EXPECT_NE(h.malloc(100), nullptr); });
}

TEST(PHOThreadHeap, FourThreadsCrossThreadFrees) {
  const std::size_t before = processAccount().held();
  {
    Owned h;
    test::crossThreadStress(h, 4, 1'000'000, 31);
  }
  EXPECT_EQ(processAccount().held(), before);
}

TEST(PHOThreadHeap, OverMallocHeapAccountsExactly) {
  const std::size_t before = processAccount().held();
  {
    PHOThreadHeap<4, MallocHeap, std::mutex> h;
    test::crossThreadStress(h, 4, 200'000, 32);
    EXPECT_EQ(h.bytesHeld(), 0u);
  }
  EXPECT_EQ(processAccount().held(), before);
}

TEST(PHOThreadHeap, DifferentialSingleThread) {
  test::expectEverythingReturned<ANSIWrapper<PHOThreadHeap<4, KingsleyHeap<SbrkHeap<>>>>>(
      {.seed = 33, .ops = 500'000, .zeroSizes = true});
}
