// record_lifetimes_program N: the main thread creates N short-lived threads one after another
// (each joined before the next starts), after a marker malloc(4000) freed on the main thread.
// Thread i: malloc(5000 + i) and its free; calloc(1, 64 KiB) with one byte written, freed (a
// large object freed on the thread); a thread_local object whose destructor frees
// malloc(6000 + i) at the thread's end; a pthread key whose destructor frees malloc(7000 + i)
// (the key is made after the recorder's, so its destructor runs after the recorder's in each
// round of key destructors). The last thread ends with pthread_exit instead of a
// return. record_test checks that each thread's events lie between its ThreadStart and
// ThreadEnd.
#include <pthread.h>
#include <stdlib.h>
#include <sys/prctl.h>

#include <cstddef>

namespace {
void escape(const void* p) { asm volatile("" : : "r"(p) : "memory"); }

struct Holder {
  void* p = nullptr;
  ~Holder() { free(p); }
};
thread_local Holder tHolder;
int gThreads = 0;
pthread_key_t gKey;

void freeValue(void* p) { free(p); }

void* work(void* arg) {
  const auto i = reinterpret_cast<std::size_t>(arg);
  tHolder.p = malloc(6000 + i);
  escape(tHolder.p);
  void* keyed = malloc(7000 + i);
  escape(keyed);
  pthread_setspecific(gKey, keyed);
  void* a = malloc(5000 + i);
  escape(a);
  free(a);
  char* big = static_cast<char*>(calloc(1, 64 * 1024));
  if (big != nullptr) big[20000] = 1;
  escape(big);
  free(big);
  if (static_cast<int>(i) == gThreads - 1) pthread_exit(nullptr);
  return nullptr;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);  // one written byte makes one page resident, not 2 MiB
  gThreads = atoi(argv[1]);
  if (pthread_key_create(&gKey, freeValue) != 0) return 12;
  void* marker = malloc(4000);
  escape(marker);
  free(marker);
  for (int i = 0; i < gThreads; ++i) {
    pthread_t t;
    if (pthread_create(&t, nullptr, work, reinterpret_cast<void*>(static_cast<std::size_t>(i))) != 0)
      return 10;
    if (pthread_join(t, nullptr) != 0) return 11;
  }
  return 0;
}
