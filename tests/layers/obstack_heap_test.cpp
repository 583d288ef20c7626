// ObstackHeap: growing, finishing, moving a grown object to a bigger chunk, freeing back to a
// mark (and the chunks that frees empty), alignment, a randomised model check of contents,
// every chunk returned on clear/destroy, huge requests, and ASan poisoning of freed space.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "strata/detail/poison.hpp"
#include "strata/special/obstack_heap.hpp"
#include "strata/top/malloc_heap.hpp"
#include "common/counting_heap.hpp"

using namespace strata;

using Counted = test::CountingHeap<MallocHeap>;
using Obstack = ObstackHeap<1024, Counted>;
static_assert(Heap<Obstack> && ClearableHeap<Obstack> && Obstack::Alignment == 16);

static std::string str(const void* p, std::size_t n) {
  return std::string(static_cast<const char*>(p), n);
}

TEST(ObstackHeap, GrowAndFinish) {
  Obstack o;
  EXPECT_TRUE(o.empty());
  ASSERT_TRUE(o.grow("hello", 5));
  ASSERT_TRUE(o.grow1(','));
  ASSERT_TRUE(o.grow(" world", 6));
  EXPECT_EQ(o.objectSize(), 12u);
  EXPECT_EQ(str(o.base(), 12), "hello, world");
  EXPECT_EQ(static_cast<char*>(o.nextFree()) - static_cast<char*>(o.base()), 12);
  void* p = o.finish();
  EXPECT_EQ(str(p, 12), "hello, world");
  EXPECT_EQ(o.objectSize(), 0u);
  EXPECT_TRUE(detail::is_aligned(o.base(), 16));
  void* q = o.malloc(3);
  EXPECT_EQ(static_cast<char*>(q), static_cast<char*>(p) + 16);
  EXPECT_FALSE(o.empty());
  EXPECT_EQ(o.mallocs, 1u);
}

TEST(ObstackHeap, GrowingObjectMovesToBiggerChunk) {
  Obstack o;
  void* first = o.malloc(100);
  std::memset(first, 'f', 100);
  std::string expect;
  for (int i = 0; i < 5000; ++i) {
    const char c = static_cast<char>('a' + i % 26);
    ASSERT_TRUE(o.grow1(static_cast<unsigned char>(c)));
    expect += c;
  }
  EXPECT_GT(o.mallocs, 1u);
  void* big = o.finish();
  EXPECT_EQ(str(big, 5000), expect);
  EXPECT_EQ(str(first, 100), std::string(100, 'f'));  // earlier objects never move
  // Chunks that held only the moving object went back: at most the first chunk and one
  // big enough for the object remain.
  EXPECT_EQ(o.live(), 2u);
  EXPECT_GE(o.memoryUsed(), 5000u + 1024u);
}

TEST(ObstackHeap, FreeToMarkPopsLaterObjectsAndChunks) {
  Obstack o;
  char* a = static_cast<char*>(o.malloc(10));
  std::memcpy(a, "0123456789", 10);
  char* mark = static_cast<char*>(o.malloc(10));
  for (int i = 0; i < 50; ++i) ASSERT_NE(o.malloc(300), nullptr);
  const std::size_t chunks = o.live();
  EXPECT_GT(chunks, 10u);
  o.free(mark);
  EXPECT_EQ(o.live(), 1u);
  EXPECT_EQ(o.base(), mark);
  EXPECT_EQ(o.objectSize(), 0u);
  EXPECT_EQ(str(a, 10), "0123456789");
  EXPECT_EQ(o.malloc(10), mark);  // the space is reused
  int stranger = 0;
  EXPECT_FALSE(o.freeTo(&stranger));  // not ours: refused, nothing changed
  EXPECT_EQ(o.live(), 1u);
  o.free(nullptr);
  o.free(a);
  EXPECT_TRUE(o.empty());
  EXPECT_EQ(o.strays, 0u);
}

TEST(ObstackHeap, EmptyObjectAtChunkStartSurvivesMove) {
  Obstack o;
  o.free(o.malloc(0));  // now at the first object position
  void* empty = o.finish();
  for (int i = 0; i < 3000; ++i) ASSERT_TRUE(o.grow1('x'));  // forces a move
  void* big = o.finish();
  EXPECT_NE(big, empty);
  EXPECT_TRUE(o.freeTo(empty));  // the chunk holding the empty object was kept
  EXPECT_EQ(o.live(), 1u);
}

TEST(ObstackHeap, BlankShrinkAndAlignment) {
  Obstack o;
  ASSERT_TRUE(o.blank(40));
  o.shrink(30);
  EXPECT_EQ(o.objectSize(), 10u);
  o.shrink(100);
  EXPECT_EQ(o.objectSize(), 0u);
  o.setAlignment(1);
  char* s = static_cast<char*>(o.malloc(3));
  char* t = static_cast<char*>(o.malloc(3));
  EXPECT_EQ(t, s + 3);  // packed
  o.setAlignment(64);
  o.malloc(1);
  EXPECT_TRUE(detail::is_aligned(o.base(), 64));
  EXPECT_EQ(o.alignment(), 64u);
}

TEST(ObstackHeap, RoomAndMakeRoom) {
  Obstack o;
  ASSERT_TRUE(o.makeRoom(0));
  const std::size_t room = o.room();
  EXPECT_GT(room, 900u);
  EXPECT_LE(room, 1024u - Obstack::HeaderSize);
  ASSERT_TRUE(o.grow("abc", 3));
  EXPECT_EQ(o.room(), room - 3);
  ASSERT_TRUE(o.makeRoom(5000));
  EXPECT_GE(o.room(), 5000u);
  EXPECT_EQ(str(o.base(), 3), "abc");
}

TEST(ObstackHeap, HugeRequestsFailCleanly) {
  Obstack o;
  ASSERT_TRUE(o.grow("keep", 4));
  for (std::size_t n : {SIZE_MAX, SIZE_MAX - 16, std::size_t{PTRDIFF_MAX}}) {
    errno = 0;
    EXPECT_EQ(o.malloc(n), nullptr) << n;
    EXPECT_EQ(errno, ENOMEM);
    EXPECT_FALSE(o.blank(n));
  }
  EXPECT_EQ(str(o.finish(), 4), "keep");
}

TEST(ObstackHeap, ChunkSizeIsAdjustable) {
  Obstack o;
  o.setChunkSize(8192);
  o.malloc(1);
  EXPECT_EQ(o.memoryUsed(), 8192u);
  EXPECT_EQ(o.lastRequest, 8192u);
}

// A model check: random grow/finish/alloc/free-to-mark, each finished object's contents
// compared with a copy after every free; destroy gives every chunk back.
TEST(ObstackHeap, RandomAgainstModel) {
  {
    Obstack o;
    std::mt19937 rng(7);
    struct Obj {
      char* p;
      std::string bytes;
    };
    std::vector<Obj> live;
    std::string growing;
    for (int step = 0; step < 100000; ++step) {
      const unsigned op = rng() % 10;
      if (op < 4) {
        const std::size_t n = rng() % (rng() % 8 == 0 ? 3000 : 40);
        std::string data(n, '\0');
        for (auto& ch : data) ch = static_cast<char>(rng());
        ASSERT_TRUE(o.grow(data.data(), n));
        growing += data;
      } else if (op < 6) {
        char* p = static_cast<char*>(o.finish());
        ASSERT_TRUE(detail::is_aligned(p, 16));
        ASSERT_EQ(str(p, growing.size()), growing);
        live.push_back({p, growing});
        growing.clear();
      } else if (op < 8 && growing.empty()) {
        const std::size_t n = rng() % 200;
        char* p = static_cast<char*>(o.malloc(n));
        ASSERT_NE(p, nullptr);
        std::memset(p, static_cast<int>(n), n);
        live.push_back({p, std::string(n, static_cast<char>(n))});
      } else if (op == 9 && !live.empty()) {
        const std::size_t i = rng() % live.size();
        o.free(live[i].p);
        live.resize(i);
        growing.clear();
        for (const Obj& ob : live) ASSERT_EQ(str(ob.p, ob.bytes.size()), ob.bytes);
      }
      ASSERT_EQ(o.objectSize(), growing.size());
    }
    EXPECT_EQ(o.strays, 0u);
    o.clear();
    EXPECT_EQ(o.live(), 0u);
  }
}

TEST(ObstackHeap, ClearAndDestroyGiveEveryChunkBack) {
  Obstack o;
  for (int i = 0; i < 100; ++i) o.malloc(500);
  EXPECT_GT(o.live(), 40u);
  o.clear();
  EXPECT_EQ(o.live(), 0u);
  EXPECT_EQ(o.memoryUsed(), 0u);
  EXPECT_NE(o.malloc(10), nullptr);  // still usable
  {
    ObstackHeap<4096, MallocHeap> m;
    for (int i = 0; i < 100; ++i) m.malloc(1000);
    EXPECT_GT(m.bytesHeld(), 100000u);
    m.clear();
    EXPECT_EQ(m.bytesHeld(), 0u);
    m.malloc(10);
  }
}

#ifdef STRATA_ASAN
// Built with AddressSanitizer: freed objects, the room above the top and the old copy of a
// moved object are poisoned.
TEST(ObstackHeapDeathTest, UseAfterFreeToMarkIsReported) {
  Obstack o;
  o.malloc(8);
  auto* p = static_cast<volatile char*>(o.malloc(64));
  p[0] = 1;
  o.free(const_cast<char*>(p));
  EXPECT_DEATH((void)p[0], "use-after-poison");
}

TEST(ObstackHeapDeathTest, RoomAboveTopIsPoisoned) {
  Obstack o;
  auto* p = static_cast<volatile char*>(o.malloc(20));
  p[19] = 1;
  EXPECT_DEATH((void)p[40], "use-after-poison");
}

TEST(ObstackHeapDeathTest, OldCopyOfMovedObjectIsPoisoned) {
  Obstack o;
  o.malloc(16);
  auto* old = static_cast<volatile char*>(o.base());
  o.grow("abc", 3);
  for (int i = 0; i < 3000; ++i) o.grow1('x');
  EXPECT_NE(static_cast<void*>(const_cast<char*>(old)), o.base());
  EXPECT_DEATH((void)old[0], "use-after-poison");
}
#else
TEST(ObstackHeapDeathTest, UseAfterFreeToMarkIsReported) {
  GTEST_SKIP() << "needs AddressSanitizer (configure with -DSTRATA_SANITIZE=address)";
}
#endif
