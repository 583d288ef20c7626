/* fidelity_short_threads [THREADS]: the main thread runs THREADS (default 101) short-lived
 * threads over its life, at most four at a time. Each allocates about 3 MiB at a time, 12
 * times over, in objects of 32 B - 16 KiB, touches them, frees them all and exits. Allocators that keep a cache or
 * an arena per thread must hand a dead thread's memory on to the next one. */
#include <pthread.h>
#include <string.h>

#include "fidelity_common.h"

enum { kAtOnce = 4, kObjects = 1024 };

static void* run(void* arg) {
  const uint64_t index = (uint64_t)(uintptr_t)arg;
  uint64_t rng = 9000 + index, sum = 0;
  unsigned char* objs[kObjects];
  size_t sizes[kObjects];
  for (int round = 0; round < 12; ++round) {
    for (int k = 0; k < kObjects; ++k) {
      const uint64_t r = splitmix_next(&rng) % 16;
      sizes[k] = (size_t)(r < 12 ? splitmix_range(&rng, 32, 1024) : splitmix_range(&rng, 1024, 16384));
      objs[k] = fid_check(malloc(sizes[k]), "object");
      memset(objs[k], (int)(k + round), sizes[k]);
    }
    for (int k = 0; k < kObjects; ++k) {
      sum += objs[k][sizes[k] - 1] + sizes[k];
      free(objs[k]);
    }
  }
  return (void*)(uintptr_t)sum;
}

int main(int argc, char** argv) {
  const long threads = fid_size_arg(argc, argv, 101, "THREADS");
  pthread_t running[kAtOnce];
  long started = 0;
  uint64_t sum = 0;
  /* Waves of kAtOnce: start them, join them, start the next. */
  while (started < threads) {
    int n = 0;
    for (; n < kAtOnce && started < threads; ++n, ++started)
      if (pthread_create(&running[n], NULL, run, (void*)(uintptr_t)started) != 0) return 1;
    for (int i = 0; i < n; ++i) {
      void* r;
      pthread_join(running[i], &r);
      sum += (uint64_t)(uintptr_t)r;
    }
  }
  printf("short_threads threads=%ld checksum=%016llx\n", threads, (unsigned long long)sum);
  return 0;
}
