// The heap registry and per-thread binding: instance ids are never reused, unbind orphans
// the calling thread's heap in its instance, a thread's exit orphans it through the pthread
// key, and an instance removed before the thread exits is never touched.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "strata/strata_heap/heap_registry.hpp"

using strata::detail::heapBinding;
using strata::detail::heapRegistry;

namespace {
struct Orphaned {
  void* instance;
  void* heap;
};
std::vector<Orphaned> orphaned;  // guarded by the registry's lock while orphans are made
void record(void* instance, void* heap) { orphaned.push_back({instance, heap}); }
}  // namespace

TEST(HeapRegistry, IdsAreNeverReused) {
  int a = 0, b = 0;
  const std::uint64_t first = heapRegistry.add(&a, record);
  heapRegistry.remove(first);
  const std::uint64_t second = heapRegistry.add(&b, record);
  EXPECT_GT(second, first);
  EXPECT_NE(second, 0u);
  heapRegistry.remove(second);
}

TEST(HeapRegistry, UnbindOrphansTheBoundHeap) {
  orphaned.clear();
  int instance = 0, heap = 0;
  const std::uint64_t id = heapRegistry.add(&instance, record);
  heapRegistry.bind(id, &heap, &instance);
  EXPECT_EQ(heapBinding.instance, id);
  EXPECT_EQ(heapBinding.heap, &heap);
  heapRegistry.unbind();
  ASSERT_EQ(orphaned.size(), 1u);
  EXPECT_EQ(orphaned[0].instance, &instance);
  EXPECT_EQ(orphaned[0].heap, &heap);
  EXPECT_EQ(heapBinding.instance, 0u);
  heapRegistry.unbind();
  EXPECT_EQ(orphaned.size(), 1u) << "nothing bound: nothing to orphan";
  heapRegistry.remove(id);
}

TEST(HeapRegistry, RemoveForgetsTheCallersBinding) {
  int instance = 0, heap = 0;
  const std::uint64_t id = heapRegistry.add(&instance, record);
  heapRegistry.bind(id, &heap, &instance);
  heapRegistry.remove(id);
  EXPECT_EQ(heapBinding.instance, 0u);
  EXPECT_EQ(heapBinding.heap, nullptr);
}

TEST(HeapRegistry, ThreadExitOrphansThroughTheKey) {
  orphaned.clear();
  int instance = 0, heap = 0;
  const std::uint64_t id = heapRegistry.add(&instance, record);
  std::thread([&] { heapRegistry.bind(id, &heap, &instance); }).join();
  ASSERT_EQ(orphaned.size(), 1u);
  EXPECT_EQ(orphaned[0].instance, &instance);
  EXPECT_EQ(orphaned[0].heap, &heap);
  EXPECT_EQ(heapBinding.instance, 0u) << "the main thread was never bound";
  heapRegistry.remove(id);
}

TEST(HeapRegistry, ARemovedInstanceIsNotTouchedAtThreadExit) {
  orphaned.clear();
  int instance = 0, heap = 0;
  const std::uint64_t id = heapRegistry.add(&instance, record);
  std::atomic<int> step{0};
  std::thread t([&] {
    heapRegistry.bind(id, &heap, &instance);
    step = 1;
    while (step.load() != 2) std::this_thread::yield();
  });
  while (step.load() != 1) std::this_thread::yield();
  heapRegistry.remove(id);
  const std::uint64_t next = heapRegistry.add(&instance, record);  // a new id, not the old one
  step = 2;
  t.join();
  EXPECT_TRUE(orphaned.empty());
  heapRegistry.remove(next);
}
