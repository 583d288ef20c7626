// record_threads_program: kThreads threads with known per-thread sequences and cross-thread
// frees. Thread t allocates kObjects objects of sizes 1000 * (t + 1) + i (i = 0, 1, ...), all
// threads meet at a barrier, then thread t frees thread (t + 1) % kThreads's objects in order
// of i. record_test checks each thread's events and the ids that connect them.
#include <pthread.h>
#include <stdlib.h>

#include <cstddef>

namespace {
constexpr int kThreads = 4;
constexpr int kObjects = 200;
void* gObjects[kThreads][kObjects];
pthread_barrier_t gBarrier;

void escape(const void* p) { asm volatile("" : : "r"(p) : "memory"); }

// One thread's part: allocate its objects, wait for the others, free its neighbour's.
void* work(void* arg) {
  const int t = static_cast<int>(reinterpret_cast<std::size_t>(arg));
  for (int i = 0; i < kObjects; ++i) {
    gObjects[t][i] = malloc(static_cast<std::size_t>(1000 * (t + 1) + i));
    escape(gObjects[t][i]);
  }
  pthread_barrier_wait(&gBarrier);
  const int other = (t + 1) % kThreads;
  for (int i = 0; i < kObjects; ++i) free(gObjects[other][i]);
  return nullptr;
}
}  // namespace

int main() {
  pthread_barrier_init(&gBarrier, nullptr, kThreads);
  pthread_t threads[kThreads];
  for (int t = 0; t < kThreads; ++t)
    if (pthread_create(&threads[t], nullptr, work, reinterpret_cast<void*>(static_cast<std::size_t>(t))) != 0)
      return 10;
  for (pthread_t th : threads) pthread_join(th, nullptr);
  pthread_barrier_destroy(&gBarrier);
  return 0;
}
