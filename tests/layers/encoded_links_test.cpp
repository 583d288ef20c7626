// EncodedLinks, the Links policy of StrataSecureHeap's pages: a page of it hands out and takes
// back every block as a plain page does (owner's list, thread-free list, carving); its links
// sit 16 bytes into a block (the first word of a 16-byte block), never as the plain address,
// and leave a block's first 16 bytes alone; a link written over after the free is reported at
// the next read of it, through the page and through the whole secure heap.
#include "strata/hardening/encoded_links.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "strata/building/size_class_page.hpp"
#include "strata/general/strata_secure_heap.hpp"

using namespace strata;

namespace {
using Page = SizeClassPageOf<EncodedLinks>;

struct Area {
  alignas(64) std::byte bytes[65536];
};

std::uint64_t wordAt(const void* p, std::size_t offset) {
  std::uint64_t w;
  std::memcpy(&w, static_cast<const std::byte*>(p) + offset, sizeof w);
  return w;
}

// "0x" and p in lower-case hex, as reportHeapCorruption prints it.
std::string hexOf(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(p)));
  return buf;
}

// Every block of the page, carved and popped, in the order the page hands them out.
std::vector<void*> takeAll(Page& page) {
  std::vector<void*> out;
  for (;;) {
    void* p = page.pop();
    if (p == nullptr && !page.extend()) return out;
    if (p != nullptr) out.push_back(p);
  }
}
}  // namespace

TEST(EncodedLinks, APageHandsOutEveryBlockOnceAndTakesItBack) {
  auto area = std::make_unique<Area>();
  Page page;
  page.init(area->bytes, sizeof area->bytes, 48, 2);
  std::set<void*> seen;
  for (void* p : takeAll(page)) {
    EXPECT_TRUE(seen.insert(p).second);
    EXPECT_EQ((static_cast<std::byte*>(p) - area->bytes) % 48, 0);
  }
  EXPECT_EQ(seen.size(), page.reserved);
  for (void* p : seen) page.pushLocal(p);
  EXPECT_EQ(page.used, 0u);
  std::set<void*> again;
  while (void* p = page.pop()) EXPECT_TRUE(again.insert(p).second);
  EXPECT_EQ(again, seen) << "the blocks come back through the encoded links, each once";
}

TEST(EncodedLinks, LinksAreEncodedPastTheFirst16BytesWhichStayAsTheyWere) {
  auto area = std::make_unique<Area>();
  Page page;
  page.init(area->bytes, sizeof area->bytes, 64, 3);
  ASSERT_TRUE(page.extend());
  auto* a = static_cast<std::byte*>(page.pop());
  auto* b = static_cast<std::byte*>(page.pop());
  std::memset(a, 0x11, 16);
  std::memset(b, 0x22, 16);
  page.pushLocal(b);
  page.pushLocal(a);  // a's link now leads to b
  EXPECT_EQ(wordAt(a, 0), 0x1111111111111111ULL) << "the first 16 bytes (a header above) stay";
  EXPECT_EQ(wordAt(a, 8), 0x1111111111111111ULL);
  EXPECT_NE(wordAt(a, 16), reinterpret_cast<std::uintptr_t>(b)) << "not the plain address";
  EXPECT_NE(wordAt(a, 16), wordAt(b, 16)) << "each block's encoding differs";
  EXPECT_EQ(page.pop(), a);
  EXPECT_EQ(page.pop(), b);
}

TEST(EncodedLinks, SixteenByteBlocksKeepTheLinkInTheirFirstWord) {
  auto area = std::make_unique<Area>();
  Page page;
  page.init(area->bytes, sizeof area->bytes, 16, 0);
  ASSERT_TRUE(page.extend());
  auto* a = static_cast<std::byte*>(page.pop());
  auto* b = static_cast<std::byte*>(page.pop());
  std::memset(b, 0x33, 16);
  page.pushLocal(a);
  EXPECT_EQ(wordAt(b, 0), 0x3333333333333333ULL) << "a's link did not spill into b";
  page.pushLocal(b);
  EXPECT_EQ(page.pop(), b);
  EXPECT_EQ(page.pop(), a);
}

TEST(EncodedLinks, OtherThreadsFreesAreCollectedThroughEncodedLinks) {
  auto area = std::make_unique<Area>();
  Page page;
  page.init(area->bytes, sizeof area->bytes, 32, 1);
  const std::vector<void*> out = takeAll(page);
  std::thread t1([&] { for (std::size_t i = 0; i < out.size(); i += 2) page.pushRemote(out[i]); });
  std::thread t2([&] { for (std::size_t i = 1; i < out.size(); i += 2) page.pushRemote(out[i]); });
  t1.join();
  t2.join();
  EXPECT_EQ(page.collect(), out.size());
  EXPECT_EQ(page.used, 0u);
  std::set<void*> back;
  while (void* p = page.pop()) EXPECT_TRUE(back.insert(p).second);
  EXPECT_EQ(back, std::set<void*>(out.begin(), out.end()));
}

using EncodedLinksDeathTest = ::testing::Test;

TEST_F(EncodedLinksDeathTest, ALinkWrittenOverIsReportedAtTheNextPop) {
  auto area = std::make_unique<Area>();
  Page page;
  page.init(area->bytes, sizeof area->bytes, 64, 3);
  ASSERT_TRUE(page.extend());
  auto* a = static_cast<std::byte*>(page.pop());
  auto* b = static_cast<std::byte*>(page.pop());
  page.pushLocal(b);
  page.pushLocal(a);
  const std::string where = "strata: write after free over a free-list link at " + hexOf(a + 16) + "\n";
  EXPECT_DEATH(
      {
        std::memset(a + 16, 0x41, 16);  // a dangling pointer's write over a's first object bytes
        page.pop();
      },
      where);
  EXPECT_DEATH(
      {
        std::memset(a + 16, 0, 8);  // zeros are no null link either
        page.pop();
      },
      where);
}

TEST_F(EncodedLinksDeathTest, ADanglingWriteIsReportedThroughTheSecureHeap) {
  static StrataSecureHeap h;
  auto* keep = static_cast<char*>(h.malloc(40));
  auto* a = static_cast<char*>(h.malloc(40));
  auto* b = static_cast<char*>(h.malloc(40));
  h.free(b);
  h.free(a);
  EXPECT_DEATH(
      {
        std::memset(a, 0x41, 32);
        h.free(h.malloc(40));
      },
      "strata: write after free over a free-list link at " + hexOf(a));
  h.free(keep);
}
